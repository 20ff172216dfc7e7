import { ChatRole, Cli } from "../../../../gen/staragent/v1/session_pb.js";
import type { ChatHistoryReader, ChatLogRef, HistoryRequest, HistoryWindow } from "../chat-history.js";
import { capText, shortResult, stripAnsi, typeValue } from "../history-text.js";
import { JsonlHistory, type MappedMessage, type MappedResult, type RecordMapper } from "../jsonl-history.js";
import type { JsonRecord } from "../log-follower.js";
import { arrayField, objectField, objects, stringField } from "../record-fields.js";

/**
 * Record types that are never conversation; some are large (request dumps, attachments), so a line
 * whose top-level `type` is one of them is skipped without parsing (docs/status.md, docs/compat.md).
 * 2.1.332 writes that `type` first, or (attachments) right after the payload, before the envelope's
 * plain fields: the first or the last `type` of the line.
 */
const METADATA_TYPES: ReadonlySet<string> = new Set([
  "api-request",
  "api-request-blob",
  "api-request-shape",
  "attachment",
  "atis-latch",
  "ai-title",
  "cost-state",
  "custom-title",
  "file-history-snapshot",
  "last-prompt",
  "mode",
  "permission-mode",
  "progress",
  "queue-operation",
  "summary",
  "tools-used",
]);
/** Texts Claude Code writes as a `user` line when the user interrupts. */
const INTERRUPT_PREFIX = "[Request interrupted by user";
/** A slash command: `<command-name>/clear</command-name>…<command-args>…</command-args>`. */
const COMMAND = /<command-name>([^<]*)<\/command-name>/;
const COMMAND_ARGS = /<command-args>([\s\S]*?)<\/command-args>/;
/** Output of a local slash command or of a `!` shell command. */
const LOCAL_OUTPUT = /^<(local-command-std(?:out|err)|bash-std(?:out|err))>/;
const BASH_INPUT = /^<bash-input>([\s\S]*?)<\/bash-input>/;
/**
 * `/compact`'s own output, written after the command (2.1.332: "Compacted (ctrl+o to see full
 * summary)"): the compaction's one system message, where the screen shows it. The boundary record of
 * a manual compaction comes before the command and says nothing more; an automatic compaction has
 * only its boundary.
 */
const COMPACT_OUTPUT = /^Compacted\b/;
/** The system message a compaction becomes. */
const COMPACTED = "Conversation compacted";
/** The input field that names what each of Claude Code's tools works on. */
const TOOL_TARGET_FIELDS: Readonly<Record<string, readonly string[]>> = {
  Bash: ["command"],
  Read: ["file_path"],
  Write: ["file_path"],
  Edit: ["file_path"],
  MultiEdit: ["file_path"],
  NotebookEdit: ["notebook_path"],
  Glob: ["pattern"],
  Grep: ["pattern"],
  LS: ["path"],
  WebFetch: ["url"],
  WebSearch: ["query"],
  Task: ["description"],
  Agent: ["description"],
  Skill: ["skill", "command"],
};
/** Fields tried for tools not listed above (MCP tools, newer built-ins). */
const GENERIC_TARGET_FIELDS = ["command", "file_path", "path", "pattern", "url", "query", "description"];

/**
 * Claude Code's transcript as chat (docs/chat.md, docs/status.md "Per CLI"): prompts, answers (one per text block),
 * tool calls with their command or file and the result from the later `tool_result` line,
 * interrupts, API errors and compaction as system messages. Sidechains (subagents), meta lines,
 * the compaction summary and metadata records are not the conversation.
 */
export const claudeTranscriptMapper: RecordMapper = {
  skipLine: (line) => METADATA_TYPES.has(typeValue(line, "first")) || METADATA_TYPES.has(typeValue(line, "last")),
  messages(record) {
    if (record.isSidechain === true || record.isMeta === true) return [];
    const time = timeOf(record);
    switch (record.type) {
      case "user":
        return userMessages(record, time);
      case "assistant":
        return assistantMessages(record, time);
      case "system":
        return systemMessages(record, time);
      default:
        return [];
    }
  },
  results(record) {
    if (record.type !== "user" || record.isSidechain === true) return [];
    const out: MappedResult[] = [];
    for (const block of objects(arrayField(objectField(record, "message"), "content"))) {
      if (block.type !== "tool_result") continue;
      const callId = stringField(block, "tool_use_id");
      if (callId === "") continue;
      const text = blockText(block.content);
      out.push({ callId, text: text.trim() === "" ? "(no output)" : shortResult(text) });
    }
    return out;
  },
};

function timeOf(record: JsonRecord): Date | undefined {
  const at = Date.parse(stringField(record, "timestamp"));
  return Number.isFinite(at) ? new Date(at) : undefined;
}

/** The text of a content value: a string, or its text blocks joined (images as `[image]`). */
function blockText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return objects(content)
    .map((b) => (b.type === "text" ? stringField(b, "text") : b.type === "image" ? "[image]" : ""))
    .filter((t) => t !== "")
    .join("\n");
}

function userMessages(record: JsonRecord, time: Date | undefined): MappedMessage[] {
  if (record.isCompactSummary === true || record.isVisibleInTranscriptOnly === true) return [];
  const content = objectField(record, "message")?.content;
  if (Array.isArray(content) && objects(content).some((b) => b.type === "tool_result")) return [];
  const text = blockText(content).trim();
  if (text === "") return [];
  if (text.startsWith(INTERRUPT_PREFIX)) return [{ role: ChatRole.SYSTEM, text: "Interrupted", time }];
  const command = COMMAND.exec(text);
  if (command) {
    const args = COMMAND_ARGS.exec(text)?.[1]?.trim() ?? "";
    return [{ role: ChatRole.USER, text: `${command[1] ?? ""}${args ? ` ${args}` : ""}`, time }];
  }
  const bash = BASH_INPUT.exec(text);
  if (bash) return [{ role: ChatRole.USER, text: `! ${bash[1] ?? ""}`, time }];
  if (LOCAL_OUTPUT.test(text)) {
    const output = stripAnsi(text.replace(/<\/?[a-z-]+>/g, "")).trim();
    if (output === "") return [];
    return [{ role: ChatRole.SYSTEM, text: COMPACT_OUTPUT.test(output) ? COMPACTED : shortResult(output), time }];
  }
  return [{ role: ChatRole.USER, text: capText(text), time }];
}

function assistantMessages(record: JsonRecord, time: Date | undefined): MappedMessage[] {
  const message = objectField(record, "message");
  const blocks = objects(arrayField(message, "content"));
  if (record.isApiErrorMessage === true) {
    const text = blocks
      .map((b) => stringField(b, "text"))
      .join("\n")
      .trim();
    return [{ role: ChatRole.SYSTEM, text: text || "API error", time }];
  }
  const out: MappedMessage[] = [];
  for (const block of blocks) {
    if (block.type === "text") {
      const text = stringField(block, "text").trim();
      if (text !== "") out.push({ role: ChatRole.ASSISTANT, text: capText(text), time });
    } else if (block.type === "tool_use") {
      const name = stringField(block, "name");
      out.push({
        role: ChatRole.TOOL,
        toolName: name,
        toolTarget: toolTarget(name, objectField(block, "input")),
        text: "",
        callId: stringField(block, "id"),
        time,
      });
    }
  }
  return out;
}

function systemMessages(record: JsonRecord, time: Date | undefined): MappedMessage[] {
  const subtype = stringField(record, "subtype");
  if (subtype === "compact_boundary") {
    const manual = stringField(objectField(record, "compactMetadata"), "trigger") === "manual";
    return manual ? [] : [{ role: ChatRole.SYSTEM, text: COMPACTED, time }];
  }
  if (subtype === "local_command") {
    const output = stripAnsi(stringField(record, "content").replace(/<\/?[a-z-]+>/g, "")).trim();
    if (output === "" || COMPACT_OUTPUT.test(output) || COMMAND.test(output)) return [];
    return [{ role: ChatRole.SYSTEM, text: shortResult(output), time }];
  }
  return [];
}

/** What a tool call works on, for its chat header: the command, file, pattern or URL. */
function toolTarget(name: string, input: JsonRecord | undefined): string {
  if (!input) return "";
  if (name === "AskUserQuestion") {
    return stringField(objects(arrayField(input, "questions"))[0], "question");
  }
  for (const field of TOOL_TARGET_FIELDS[name] ?? GENERIC_TARGET_FIELDS) {
    const value = stringField(input, field);
    if (value !== "") return value.length > 200 ? `${value.slice(0, 200)}…` : value;
  }
  return "";
}

/** Claude Code's transcripts as chat history. */
export class ClaudeTranscriptHistory implements ChatHistoryReader {
  readonly cli = Cli.CLAUDE;
  private readonly history = new JsonlHistory(claudeTranscriptMapper);

  async read(log: ChatLogRef, request: HistoryRequest): Promise<HistoryWindow | undefined> {
    const window = await this.history.read(log, request);
    return window && { ...window, label: `claude transcript ${window.label}` };
  }

  /** Forgets what was read (benchmarks measure cold reads with it). */
  clear(): void {
    this.history.clear();
  }
}
