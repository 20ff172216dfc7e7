import { ChatRole, Cli } from "../../../../gen/staragent/v1/session_pb.js";
import type { ChatHistoryReader, ChatLogRef, HistoryRequest, HistoryWindow } from "../chat-history.js";
import { capText, shortResult, typeValue } from "../history-text.js";
import { JsonlHistory, type MappedMessage, type MappedResult, type RecordMapper } from "../jsonl-history.js";
import { type JsonRecord, parseRecord } from "../log-follower.js";
import { arrayField, objectField, objects, stringField } from "../record-fields.js";

/** Top-level record types that are never conversation (some are large: instructions, state). */
const METADATA_TYPES: ReadonlySet<string> = new Set([
  "session_meta",
  "turn_context",
  "world_state",
  "token_usage_record",
]);
/** The `event_msg` payloads chat reads (the rest are lifecycle, token counts, settings). */
const CHAT_EVENTS: ReadonlySet<string> = new Set(["turn_aborted", "error"]);
/** `response_item` payloads that are never messages (encrypted reasoning can be large). */
const SKIPPED_ITEMS: ReadonlySet<string> = new Set(["reasoning"]);
/** Function calls that run a shell command, shown as tool `shell` (as Codex's screen says "Ran …"). */
const SHELL_CALLS: ReadonlySet<string> = new Set(["exec_command", "shell", "shell_command", "container.exec"]);
/** Texts Codex adds to the conversation as user messages itself (context, not prompts). */
const INJECTED_PREFIXES = [
  "# AGENTS.md instructions",
  "<environment_context>",
  "<turn_aborted>",
  "<user_instructions>",
];
/** A whole message that is one `<tag>…</tag>` block: context Codex injects (instructions, notifications). */
const TAG_BLOCK = /^<([a-z_]+)>[\s\S]*<\/\1>$/;
/** The header 0.17x puts before a command's output in `function_call_output`. */
const OUTPUT_HEADER = /^Chunk ID: [^\n]*\n(?:[^\n]*\n)*?Output:\n/;
/** Files a patch touches: `*** Update File: path`. */
const PATCH_FILE = /^\*\*\* (?:Add|Update|Delete) File: (.+)$/gm;

/**
 * Codex's rollout as chat (docs/status.md "Per CLI", docs/compat.md): `response_item` messages (the
 * prompts as typed, the answers; context Codex injects and the compaction's own summary left out),
 * function calls with their command and the output from `function_call_output`, and compaction,
 * interrupts and errors as system messages. Present from the legacy 0.60 rollouts to 0.171.
 */
export const codexRolloutMapper: RecordMapper = {
  // Records are `{timestamp, ordinal?, type, payload: {type, …}}`: the first `type` is the record's,
  // the second its payload's.
  skipLine(line) {
    const type = typeValue(line, "first");
    if (METADATA_TYPES.has(type)) return true;
    if (type === "event_msg") return !CHAT_EVENTS.has(typeValue(line, "second"));
    return type === "response_item" && SKIPPED_ITEMS.has(typeValue(line, "second"));
  },
  messages(record) {
    const payload = objectField(record, "payload");
    const time = timeOf(record);
    switch (record.type) {
      case "response_item":
        return payload ? itemMessages(record, payload, time) : [];
      case "compacted":
        return [{ role: ChatRole.SYSTEM, text: "Conversation compacted", time }];
      case "event_msg":
        return payload ? eventMessages(payload, time) : [];
      default:
        return [];
    }
  },
  results(record) {
    if (record.type !== "response_item") return [];
    const payload = objectField(record, "payload");
    const type = stringField(payload, "type");
    if (type !== "function_call_output" && type !== "custom_tool_call_output") return [];
    const callId = stringField(payload, "call_id");
    if (callId === "") return [];
    const output = outputText(payload?.output);
    return [{ callId, text: output.trim() === "" ? "(no output)" : shortResult(output) }] satisfies MappedResult[];
  },
};

function timeOf(record: JsonRecord): Date | undefined {
  const at = Date.parse(stringField(record, "timestamp"));
  return Number.isFinite(at) ? new Date(at) : undefined;
}

function contentText(payload: JsonRecord): string {
  return objects(arrayField(payload, "content"))
    .map((c) => stringField(c, "text"))
    .filter((t) => t !== "")
    .join("\n");
}

function itemMessages(record: JsonRecord, payload: JsonRecord, time: Date | undefined): MappedMessage[] {
  const type = stringField(payload, "type");
  if (type === "message") {
    const role = stringField(payload, "role");
    const text = contentText(payload).trim();
    if (text === "") return [];
    if (role === "user") return injected(payload, text) ? [] : [{ role: ChatRole.USER, text: capText(text), time }];
    // The summary a compaction asks the model for is not an answer (0.17x marks it).
    if (role === "assistant" && objectField(record, "metadata")?.compaction_output !== true) {
      return [{ role: ChatRole.ASSISTANT, text: capText(text), time }];
    }
    return [];
  }
  const callId = stringField(payload, "call_id");
  if (type === "function_call") {
    const name = stringField(payload, "name");
    const args = parseRecord(stringField(payload, "arguments")) ?? {};
    const shell = SHELL_CALLS.has(name);
    return [
      {
        role: ChatRole.TOOL,
        toolName: shell ? "shell" : name,
        toolTarget: shell ? commandOf(args) : (patchFiles(stringField(args, "input")) ?? firstString(args)),
        text: "",
        callId,
        time,
      },
    ];
  }
  if (type === "custom_tool_call") {
    const name = stringField(payload, "name");
    const input = stringField(payload, "input");
    return [{ role: ChatRole.TOOL, toolName: name, toolTarget: patchFiles(input) ?? "", text: "", callId, time }];
  }
  if (type === "local_shell_call") {
    const action = objectField(payload, "action");
    return [{ role: ChatRole.TOOL, toolName: "shell", toolTarget: commandOf(action ?? {}), text: "", callId, time }];
  }
  if (type === "web_search_call") {
    const query = stringField(objectField(payload, "action"), "query");
    return [{ role: ChatRole.TOOL, toolName: "web_search", toolTarget: query, text: "", time }];
  }
  return [];
}

function eventMessages(payload: JsonRecord, time: Date | undefined): MappedMessage[] {
  switch (payload.type) {
    case "turn_aborted": {
      const reason = stringField(payload, "reason");
      if (reason === "replaced") return [];
      const text = reason === "interrupted" || reason === "" ? "Conversation interrupted" : `Turn ended: ${reason}`;
      return [{ role: ChatRole.SYSTEM, text, time }];
    }
    case "error": {
      const text = stringField(payload, "message").trim();
      return text === "" ? [] : [{ role: ChatRole.SYSTEM, text: shortResult(text), time }];
    }
    default:
      return [];
  }
}

/** True for a user message Codex wrote itself: context blocks rather than a typed prompt. */
function injected(payload: JsonRecord, text: string): boolean {
  const provenance = objects(
    arrayField(objectField(payload, "internal_chat_message_metadata_passthrough"), "content_item_metadata"),
  ).map((m) => stringField(objectField(m, "provenance"), "type"));
  if (provenance.includes("user")) return false;
  return INJECTED_PREFIXES.some((p) => text.startsWith(p)) || TAG_BLOCK.test(text);
}

/** The command of a shell call: `cmd` (exec_command), or the script of `["bash", "-lc", script]`. */
function commandOf(args: JsonRecord): string {
  const cmd = stringField(args, "cmd");
  if (cmd !== "") return cmd;
  const command = args.command;
  if (typeof command === "string") return command;
  const parts = arrayField(args, "command").filter((p): p is string => typeof p === "string");
  const shell = parts.length >= 3 && /(?:^|\/)(?:ba|z)?sh$/.test(parts[0] ?? "") && /^-\w*c$/.test(parts[1] ?? "");
  return shell ? parts.slice(2).join(" ") : parts.join(" ");
}

/** The files a patch names, joined; undefined when `input` is not a patch. */
function patchFiles(input: string): string | undefined {
  const files = [...input.matchAll(PATCH_FILE)].map((m) => (m[1] ?? "").trim());
  return files.length > 0 ? files.join(", ") : undefined;
}

function firstString(args: JsonRecord): string {
  for (const value of Object.values(args)) if (typeof value === "string" && value !== "") return value.slice(0, 200);
  return "";
}

/** A tool's output as text: 0.17x strings with a header, older JSON `{"output": …}` strings, or content items. */
function outputText(output: unknown): string {
  if (typeof output === "string") {
    if (output.startsWith("{")) {
      const parsed = parseRecord(output);
      if (parsed && typeof parsed.output === "string") return parsed.output;
    }
    return output.replace(OUTPUT_HEADER, "");
  }
  if (Array.isArray(output)) return contentText({ content: output });
  if (output !== null && typeof output === "object") {
    const record = output as JsonRecord;
    if (typeof record.content === "string") return record.content;
    return contentText(record);
  }
  return "";
}

/** Codex's rollouts as chat history. */
export class CodexRolloutHistory implements ChatHistoryReader {
  readonly cli = Cli.CODEX;
  private readonly history = new JsonlHistory(codexRolloutMapper);

  async read(log: ChatLogRef, request: HistoryRequest): Promise<HistoryWindow | undefined> {
    const window = await this.history.read(log, request);
    return window && { ...window, label: `codex rollout ${window.label}` };
  }

  /** Forgets what was read (benchmarks measure cold reads with it). */
  clear(): void {
    this.history.clear();
  }
}
