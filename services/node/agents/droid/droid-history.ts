import { ChatRole, Cli } from "../../../../gen/staragent/v1/session_pb.js";
import type { ChatHistoryReader, ChatLogRef, HistoryRequest, HistoryWindow } from "../chat-history.js";
import { capText, shortResult, typeValue } from "../history-text.js";
import { JsonlHistory, type MappedMessage, type RecordMapper } from "../jsonl-history.js";
import type { JsonRecord } from "../log-follower.js";
import { objectField, stringField } from "../record-fields.js";
import { droidBlocks, droidPromptText } from "./session.js";

/** What the screen says after a turn stopped by Escape. */
const CANCELLED_TEXT = "Request cancelled by user";

function timeOf(record: JsonRecord): Date | undefined {
  const at = Date.parse(stringField(record, "timestamp"));
  return Number.isFinite(at) ? new Date(at) : undefined;
}

/**
 * Factory droid's session log as chat (docs/chat.md): typed prompts (not the `llm_only` context
 * droid adds for the model), the replies' text, each `tool_use` with its command or file, its result
 * from the `tool_result` naming it, and a turn stopped by Escape (`agent_turn_outcome` `cancelled`).
 */
export const droidSessionMapper: RecordMapper = {
  skipLine: (line) => {
    const type = typeValue(line, "first");
    return type !== "message" && type !== "agent_turn_outcome";
  },
  messages(record) {
    const time = timeOf(record);
    if (record.type === "agent_turn_outcome") {
      return stringField(record, "reason") === "cancelled"
        ? [{ role: ChatRole.SYSTEM, text: CANCELLED_TEXT, time }]
        : [];
    }
    if (record.type !== "message") return [];
    const prompt = droidPromptText(record);
    if (prompt.trim() !== "") return [{ role: ChatRole.USER, text: capText(prompt), time }];
    if (stringField(objectField(record, "message"), "role") !== "assistant") return [];
    const out: MappedMessage[] = [];
    for (const block of droidBlocks(record)) {
      if (block.type === "text") {
        const text = stringField(block, "text").trim();
        if (text !== "") out.push({ role: ChatRole.ASSISTANT, text: capText(text), time });
      } else if (block.type === "tool_use") {
        const input = objectField(block, "input");
        out.push({
          role: ChatRole.TOOL,
          toolName: stringField(block, "name"),
          toolTarget:
            stringField(input, "command") ||
            stringField(input, "file_path") ||
            stringField(input, "path") ||
            stringField(input, "summary"),
          text: "",
          callId: stringField(block, "id"),
          time,
        });
      }
    }
    return out;
  },
  results(record) {
    if (record.type !== "message") return [];
    return droidBlocks(record).flatMap((block) => {
      if (block.type !== "tool_result") return [];
      const callId = stringField(block, "tool_use_id");
      if (callId === "") return [];
      const output = stringField(block, "content").trim();
      return [{ callId, text: output === "" ? "(no output)" : shortResult(output) }];
    });
  },
};

/** Factory droid's session logs as chat history. */
export class DroidHistory implements ChatHistoryReader {
  readonly cli = Cli.DROID;
  private readonly history = new JsonlHistory(droidSessionMapper);

  async read(log: ChatLogRef, request: HistoryRequest): Promise<HistoryWindow | undefined> {
    const window = await this.history.read(log, request);
    return window && { ...window, label: `droid session ${window.label}` };
  }

  /** Forgets what was read (benchmarks measure cold reads with it). */
  clear(): void {
    this.history.clear();
  }
}
