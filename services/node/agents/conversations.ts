import { open, readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { ChatRole } from "../../../gen/staragent/v1/session_pb.js";
import { BoundedMap } from "../../common/bounded-map.js";
import type { RecordMapper } from "./jsonl-history.js";
import { type JsonRecord, parseRecord } from "./log-follower.js";

/** Bytes read from the start of a log for its first prompt and its folder. */
const HEAD_BYTES = 64 * 1024;
/** Bytes read from the end of a log for its last prompt. */
const TAIL_BYTES = 256 * 1024;
/** Logs at most this large are read whole to count their turns; larger ones are counted in head and tail. */
export const COUNT_WHOLE_BYTES = 4 * 1024 * 1024;
/** Longest prompt excerpt shown for a conversation. */
export const PROMPT_EXCERPT_CHARS = 200;
/** Summaries kept between calls (a log's summary is read again only when its size or time changed). */
const MAX_CACHED_SUMMARIES = 4096;

/** One past conversation of a CLI found in its native logs. */
export interface ConversationInfo {
  /** The id the CLI resumes it by. */
  readonly id: string;
  /** The folder it ran in ("" when the log does not say). */
  readonly cwd: string;
  readonly firstPrompt: string;
  readonly lastPrompt: string;
  readonly updateTime: Date;
  readonly turnCount: number;
  /** False when the log was too large to count whole: `turnCount` counts its first and last part. */
  readonly turnCountExact: boolean;
  /** The log a live session's process is bound to when it has this conversation open (`conversationLogKey`). */
  readonly logPath: string;
}

/**
 * How a conversation's log is named where one file holds many conversations (opencode's database):
 * the file and the conversation in it. A live session's bound chat log is named the same way, so
 * ListConversations can tell which conversations are open.
 */
export function conversationLogKey(path: string, session = ""): string {
  return session === "" ? path : `${path}\0${session}`;
}

/** A log file that may hold a conversation, before it is read. */
export interface ConversationLog {
  readonly path: string;
  readonly mtimeMs: number;
  readonly size: number;
}

/** How one CLI's past conversations are found and resumed (an AgentModule's `conversations`). */
export interface ConversationSource {
  /** The program a resume starts when the request names no command (`claude`, `codex`). */
  readonly program: string;
  /** The arguments that make the CLI resume conversation `id`. */
  resumeArgs(id: string): string[];
  /**
   * The logs of past conversations on this machine for the node's environment, newest first; only
   * those of `cwd` when given (when the folder is in the log's path, else after reading heads).
   */
  logs(env: Readonly<Record<string, string | undefined>>, cwd: string | undefined): Promise<ConversationLog[]>;
  /** Reads one log's summary cheaply (head, tail); undefined when it holds no conversation. */
  summarize(log: ConversationLog): Promise<ConversationInfo | undefined>;
  /**
   * What the path of conversation `id`'s log contains, so a resume reads only the logs that may be it;
   * the whole id when not given (a CLI that names its logs by a part of the id gives that part).
   */
  pathKey?(id: string): string;
}

/** The `.jsonl` files of one folder with their size and time (none when it cannot be read). */
export async function jsonlFiles(
  dir: string,
  keep: (name: string) => boolean = () => true,
): Promise<ConversationLog[]> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const out: ConversationLog[] = [];
  await Promise.all(
    names.map(async (name) => {
      if (!name.endsWith(".jsonl") || !keep(name)) return;
      const path = join(dir, name);
      const info = await stat(path).catch(() => undefined);
      if (info?.isFile()) out.push({ path, mtimeMs: info.mtimeMs, size: info.size });
    }),
  );
  return out;
}

/** `length` bytes of a file from `position`, as whole lines (a cut first or last line dropped). */
async function readLines(path: string, position: number, length: number, cutFirst: boolean): Promise<string[]> {
  const handle = await open(path, "r");
  try {
    const buffer = Buffer.alloc(length);
    const { bytesRead } = await handle.read(buffer, 0, length, position);
    const lines = buffer.subarray(0, bytesRead).toString("utf8").split("\n");
    if (cutFirst) lines.shift();
    lines.pop(); // the last line is cut, or empty after the final newline
    return lines;
  } finally {
    await handle.close();
  }
}

/** A prompt as one short line: white space folded, at most PROMPT_EXCERPT_CHARS. */
export function excerpt(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > PROMPT_EXCERPT_CHARS ? `${line.slice(0, PROMPT_EXCERPT_CHARS - 1)}…` : line;
}

/** What a JSONL CLI's summary needs beyond its record mapper: where id and folder are in the log. */
export interface JsonlIdentity {
  /** The conversation's id from a record of the head, or its file name. */
  id(record: JsonRecord | undefined, path: string): string;
  /** The folder from a record of the head ("" when this record does not say). */
  cwd(record: JsonRecord): string;
}

/**
 * Summaries of JSONL logs (Claude Code transcripts, Codex rollouts) read from their head and tail:
 * the first and last user prompt as the CLI's chat mapper reads them, the folder and id, the turn
 * count (whole for logs up to COUNT_WHOLE_BYTES). The cost is the same for a 1 GB log as for a small
 * one, and a log is read again only when its size or time changed.
 */
export class JsonlSummaries {
  private readonly cache = new BoundedMap<string, { stamp: string; info: ConversationInfo | undefined }>(
    MAX_CACHED_SUMMARIES,
  );

  constructor(
    private readonly mapper: RecordMapper,
    private readonly identity: JsonlIdentity,
  ) {}

  async summarize(log: ConversationLog): Promise<ConversationInfo | undefined> {
    const stamp = `${log.size}:${log.mtimeMs}`;
    const cached = this.cache.get(log.path);
    if (cached?.stamp === stamp) return cached.info;
    const info = await this.read(log).catch(() => undefined);
    this.cache.set(log.path, { stamp, info });
    return info;
  }

  private prompts(lines: readonly string[]): { records: JsonRecord[]; prompts: string[] } {
    const records: JsonRecord[] = [];
    const prompts: string[] = [];
    for (const line of lines) {
      const record = parseRecord(line);
      if (!record) continue;
      records.push(record);
      for (const m of this.mapper.messages(record)) {
        if (m.role === ChatRole.USER && m.text.trim() !== "") prompts.push(m.text);
      }
    }
    return { records, prompts };
  }

  private async read(log: ConversationLog): Promise<ConversationInfo | undefined> {
    const whole = log.size <= COUNT_WHOLE_BYTES;
    const head = this.prompts(await readLines(log.path, 0, whole ? log.size + 1 : HEAD_BYTES, false));
    const tail =
      whole || log.size <= HEAD_BYTES
        ? head
        : this.prompts(await readLines(log.path, Math.max(0, log.size - TAIL_BYTES), TAIL_BYTES + 1, true));
    const first = head.prompts[0];
    if (first === undefined) return undefined;
    let cwd = "";
    for (const record of head.records) {
      cwd = this.identity.cwd(record);
      if (cwd !== "") break;
    }
    return {
      id: this.identity.id(head.records[0], log.path),
      cwd,
      firstPrompt: excerpt(first),
      lastPrompt: excerpt(tail.prompts.at(-1) ?? first),
      updateTime: new Date(log.mtimeMs),
      turnCount: whole ? head.prompts.length : head.prompts.length + tail.prompts.length,
      turnCountExact: whole,
      logPath: log.path,
    };
  }
}
