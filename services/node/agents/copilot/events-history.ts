import { ChatRole, Cli } from "../../../../gen/staragent/v1/session_pb.js";
import type { ChatHistoryReader, ChatLogRef, HistoryRequest, HistoryWindow } from "../chat-history.js";
import { capText, shortResult, typeValue } from "../history-text.js";
import { JsonlHistory, type MappedMessage, type MappedResult, type RecordMapper } from "../jsonl-history.js";
import type { JsonRecord } from "../log-follower.js";
import { arrayField, objectField, objects, stringField } from "../record-fields.js";

/** The record types chat reads; the rest (turn bounds, usage, permissions, session info) are not. */
const CHAT_TYPES: ReadonlySet<string> = new Set([
  "user.message",
  "assistant.message",
  "tool.execution_complete",
  "abort",
]);
/** Tool names shown as `shell`, as the screen says `Shell`. */
const SHELL_TOOLS: ReadonlySet<string> = new Set(["bash", "powershell"]);
/** The words the screen shows for an interrupted turn. */
const INTERRUPTED_TEXT = "Operation cancelled by user";

/**
 * Copilot CLI's `events.jsonl` as chat (docs/chat.md, "Copilot CLI"): `user.message` as typed (its
 * `content`, not the `transformedContent` the CLI sends), `assistant.message` text and each of its
 * `toolRequests` as a tool call (`bash` shown as `shell` with its command), whose result is the
 * `tool.execution_complete` naming it, and `abort` as the interrupt the screen shows.
 */
export const copilotEventsMapper: RecordMapper = {
  skipLine: (line) => !CHAT_TYPES.has(typeValue(line, "first")),
  messages(record) {
    const data = objectField(record, "data");
    const time = timeOf(record);
    switch (record.type) {
      case "user.message": {
        const text = stringField(data, "content").trim();
        return text === "" ? [] : [{ role: ChatRole.USER, text: capText(text), time }];
      }
      case "assistant.message": {
        const text = stringField(data, "content").trim();
        const out: MappedMessage[] = text === "" ? [] : [{ role: ChatRole.ASSISTANT, text: capText(text), time }];
        for (const call of objects(arrayField(data, "toolRequests"))) out.push(toolMessage(call, time));
        return out;
      }
      case "abort":
        return [{ role: ChatRole.SYSTEM, text: INTERRUPTED_TEXT, time }];
      default:
        return [];
    }
  },
  results(record) {
    if (record.type !== "tool.execution_complete") return [];
    const data = objectField(record, "data");
    const callId = stringField(data, "toolCallId");
    if (callId === "") return [];
    const result = objectField(data, "result");
    const error = objectField(data, "error");
    const text = stringField(result, "content") || stringField(error, "message");
    return [{ callId, text: text.trim() === "" ? "(no output)" : shortResult(text.trim()) }] satisfies MappedResult[];
  },
};

function toolMessage(call: JsonRecord, time: Date | undefined): MappedMessage {
  const name = stringField(call, "name");
  const args = objectField(call, "arguments");
  const shell = SHELL_TOOLS.has(name);
  const target = shell
    ? stringField(args, "command")
    : stringField(args, "path") || stringField(args, "file_path") || stringField(call, "intentionSummary");
  return {
    role: ChatRole.TOOL,
    toolName: shell ? "shell" : name,
    toolTarget: target,
    text: "",
    callId: stringField(call, "toolCallId"),
    time,
  };
}

function timeOf(record: JsonRecord): Date | undefined {
  const at = Date.parse(stringField(record, "timestamp"));
  return Number.isFinite(at) ? new Date(at) : undefined;
}

/** Copilot CLI's session event logs as chat history. */
export class CopilotEventsHistory implements ChatHistoryReader {
  readonly cli = Cli.COPILOT;
  private readonly history = new JsonlHistory(copilotEventsMapper);

  async read(log: ChatLogRef, request: HistoryRequest): Promise<HistoryWindow | undefined> {
    const window = await this.history.read(log, request);
    return window && { ...window, label: `copilot events ${window.label}` };
  }

  /** Forgets what was read (benchmarks measure cold reads with it). */
  clear(): void {
    this.history.clear();
  }
}
