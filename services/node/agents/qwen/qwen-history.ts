import { ChatRole, Cli } from "../../../../gen/staragent/v1/session_pb.js";
import type { ChatHistoryReader, ChatLogRef, HistoryRequest, HistoryWindow } from "../chat-history.js";
import { capText, shortResult, typeValue } from "../history-text.js";
import { JsonlHistory, type MappedMessage, type RecordMapper } from "../jsonl-history.js";
import type { JsonRecord } from "../log-follower.js";
import { objectField, stringField } from "../record-fields.js";
import { qwenParts, qwenPromptText } from "./session.js";

/** What Qwen Code's screen calls its shell tool. */
const SHELL_TOOL = "run_shell_command";

function timeOf(record: JsonRecord): Date | undefined {
  const at = Date.parse(stringField(record, "timestamp"));
  return Number.isFinite(at) ? new Date(at) : undefined;
}

/**
 * Qwen Code's session log as chat (docs/chat.md): typed prompts, the replies' text (thoughts left
 * out), tool calls with the command or file and the result from their `tool_result` record. The
 * `system` records (telemetry, snapshots) are never conversation.
 */
export const qwenSessionMapper: RecordMapper = {
  skipLine: (line) => typeValue(line, "first") === "system",
  messages(record) {
    const time = timeOf(record);
    if (record.type === "user") {
      const text = qwenPromptText(record);
      return text.trim() === "" ? [] : [{ role: ChatRole.USER, text: capText(text), time }];
    }
    if (record.type !== "assistant") return [];
    const out: MappedMessage[] = [];
    const text = qwenParts(record)
      .filter((p) => p.thought !== true)
      .map((p) => stringField(p, "text"))
      .join("")
      .trim();
    if (text !== "") out.push({ role: ChatRole.ASSISTANT, text: capText(text), time });
    for (const part of qwenParts(record)) {
      const call = objectField(part, "functionCall");
      if (!call) continue;
      const name = stringField(call, "name");
      const args = objectField(call, "args");
      out.push({
        role: ChatRole.TOOL,
        toolName: name === SHELL_TOOL ? "Shell" : name,
        toolTarget: stringField(args, "command") || stringField(args, "file_path") || stringField(args, "description"),
        text: "",
        callId: stringField(call, "id"),
        time,
      });
    }
    return out;
  },
  results(record) {
    if (record.type !== "tool_result") return [];
    return qwenParts(record).flatMap((part) => {
      const response = objectField(part, "functionResponse");
      const callId = stringField(response, "id");
      if (!response || callId === "") return [];
      const body = objectField(response, "response");
      const output = stringField(body, "output") || stringField(body, "error");
      return [{ callId, text: output.trim() === "" ? "(no output)" : shortResult(output) }];
    });
  },
};

/** Qwen Code's session logs as chat history. */
export class QwenHistory implements ChatHistoryReader {
  readonly cli = Cli.QWEN;
  private readonly history = new JsonlHistory(qwenSessionMapper);

  async read(log: ChatLogRef, request: HistoryRequest): Promise<HistoryWindow | undefined> {
    const window = await this.history.read(log, request);
    return window && { ...window, label: `qwen session ${window.label}` };
  }

  /** Forgets what was read (benchmarks measure cold reads with it). */
  clear(): void {
    this.history.clear();
  }
}
