import { ChatRole, Cli } from "../../../../gen/staragent/v1/session_pb.js";
import type { ChatHistoryReader, ChatLogRef, HistoryRequest, HistoryWindow } from "../chat-history.js";
import { capText, shortResult, typeValue } from "../history-text.js";
import { JsonlHistory, type MappedMessage, type MappedResult, type RecordMapper } from "../jsonl-history.js";
import type { JsonRecord } from "../log-follower.js";
import { arrayField, objectField, objects, stringField } from "../record-fields.js";
import { piMessage, piText } from "./session-log.js";

/** The words pi shows for an interrupted turn, and the log's `errorMessage` of one. */
const INTERRUPTED_TEXT = "Operation aborted";

/**
 * pi's session file as chat (docs/chat.md, "pi"): user messages as typed, assistant text and each
 * `toolCall` part as a tool call (`bash` shown as `shell` with its command) whose result is the
 * `toolResult` naming it, an aborted assistant message as the interrupt the screen shows, and a
 * failed request's `errorMessage` as a system message.
 */
export const piSessionMapper: RecordMapper = {
  skipLine: (line) => typeValue(line, "first") !== "message",
  messages(record) {
    const message = piMessage(record);
    if (!message) return [];
    const time = timeOf(record);
    switch (message.role) {
      case "user": {
        const text = piText(message).trim();
        return text === "" ? [] : [{ role: ChatRole.USER, text: capText(text), time }];
      }
      case "assistant": {
        const out: MappedMessage[] = [];
        const text = piText(message).trim();
        if (text !== "") out.push({ role: ChatRole.ASSISTANT, text: capText(text), time });
        for (const part of objects(arrayField(message, "content"))) {
          if (part.type === "toolCall") out.push(toolMessage(part, time));
        }
        const reason = stringField(message, "stopReason");
        if (reason === "aborted") out.push({ role: ChatRole.SYSTEM, text: INTERRUPTED_TEXT, time });
        else if (reason === "error") {
          const error = stringField(message, "errorMessage").trim();
          if (error !== "") out.push({ role: ChatRole.SYSTEM, text: capText(error), time });
        }
        return out;
      }
      default:
        return [];
    }
  },
  results(record) {
    const message = piMessage(record);
    if (message?.role !== "toolResult") return [];
    const callId = stringField(message, "toolCallId");
    if (callId === "") return [];
    const text = piText(message).trim();
    return [{ callId, text: text === "" ? "(no output)" : shortResult(text) }] satisfies MappedResult[];
  },
};

function toolMessage(call: JsonRecord, time: Date | undefined): MappedMessage {
  const name = stringField(call, "name");
  const args = objectField(call, "arguments");
  const shell = name === "bash";
  return {
    role: ChatRole.TOOL,
    toolName: shell ? "shell" : name,
    toolTarget: shell ? stringField(args, "command") : stringField(args, "path") || stringField(args, "file_path"),
    text: "",
    callId: stringField(call, "id"),
    time,
  };
}

function timeOf(record: JsonRecord): Date | undefined {
  const at = Date.parse(stringField(record, "timestamp"));
  return Number.isFinite(at) ? new Date(at) : undefined;
}

/** pi's session files as chat history. */
export class PiHistory implements ChatHistoryReader {
  readonly cli = Cli.PI;
  private readonly history = new JsonlHistory(piSessionMapper);

  async read(log: ChatLogRef, request: HistoryRequest): Promise<HistoryWindow | undefined> {
    const window = await this.history.read(log, request);
    return window && { ...window, label: `pi session ${window.label}` };
  }

  /** Forgets what was read (benchmarks measure cold reads with it). */
  clear(): void {
    this.history.clear();
  }
}
