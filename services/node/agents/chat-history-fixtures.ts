import { mkdtemp, readdir, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { ChatMessageSource, ChatRole, Cli } from "../../../gen/staragent/v1/session_pb.js";
import type { ParsedMessage } from "../chat/chat-parser.js";
import type { ChatHistoryReader, ChatLogRef } from "./chat-history.js";
import { ClaudeTranscriptHistory } from "./claude/transcript-history.js";
import { CodexRolloutHistory } from "./codex/rollout-history.js";
import { OpencodeSessionHistory } from "./opencode/session-history.js";

/**
 * One chat-history fixture (`agents/<cli>/fixtures/chat-history/<version>/cases.json`): a native log
 * as the CLI wrote it (a JSONL log cut after `records` lines, or opencode rows), the screen shown at
 * the same moment, and the merged chat a person reading both would list (`<name>.expected.json`).
 */
export interface HistoryCase {
  readonly name: string;
  /** What the case shows, for people reading the table. */
  readonly what: string;
  /** The log file, relative to the case's folder (opencode: a `{table,row}` dump). */
  readonly log: string;
  /** Lines of a JSONL log written so far (absent: all). */
  readonly records?: number;
  /** A capture file in the case's folder, or `inline:<text>`. */
  readonly screen: string;
}

/** A merged message as fixtures spell it. */
export interface PlainMergedMessage {
  readonly source: string;
  readonly role: string;
  readonly text: string;
  readonly toolName?: string;
  readonly toolTarget?: string;
}

/** Every case folder (one per version) under `root` (`agents/<cli>/fixtures/chat-history`), with its cases. */
export async function historyCaseFolders(
  root: string,
): Promise<{ dir: string; version: string; cases: HistoryCase[] }[]> {
  const versions = (await readdir(root, { withFileTypes: true }))
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  return Promise.all(
    versions.map(async (version) => {
      const dir = join(root, version);
      const cases = JSON.parse(await readFile(join(dir, "cases.json"), "utf8")) as HistoryCase[];
      return { dir, version, cases };
    }),
  );
}

/** The screen lines of a case, as `capture-pane -p -J` printed them. */
export async function caseScreen(dir: string, screen: string): Promise<string[]> {
  const text = screen.startsWith("inline:")
    ? screen.slice("inline:".length)
    : await readFile(join(dir, screen), "utf8");
  if (text === "") return [];
  return (text.endsWith("\n") ? text.slice(0, -1) : text).split("\n");
}

/** Puts a case's native log into `scratch` as the CLI would have it, with the reader for it. */
export async function placeCaseLog(
  cli: "claude" | "codex" | "opencode",
  dir: string,
  c: HistoryCase,
  scratch: string,
): Promise<{ reader: ChatHistoryReader; log: ChatLogRef }> {
  const source = join(dir, c.log);
  if (cli === "opencode") {
    const path = join(await mkdtemp(join(scratch, "oc-")), "opencode.db");
    const session = await loadOpencodeRows(source, path);
    return { reader: new OpencodeSessionHistory(), log: { path, session } };
  }
  const lines = (await readFile(source, "utf8")).split(/(?<=\n)/);
  const path = join(await mkdtemp(join(scratch, `${cli}-`)), "log.jsonl");
  await writeFile(path, lines.slice(0, c.records ?? lines.length).join(""));
  return {
    reader: cli === "claude" ? new ClaudeTranscriptHistory() : new CodexRolloutHistory(),
    log: { path, session: "" },
  };
}

/** A scratch folder for placed logs. */
export function scratchFolder(): Promise<string> {
  return mkdtemp(join(tmpdir(), "sa-chat-history-"));
}

/** Loads a `{table,row}` dump into a new opencode.db (the 1.18 schema's columns the readers use). */
async function loadOpencodeRows(rowsFile: string, path: string): Promise<string> {
  const db = new Database(path);
  try {
    db.pragma("journal_mode = WAL");
    db.exec(`CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT, parent_id TEXT, slug TEXT, directory TEXT,
      title TEXT, version TEXT, time_created INTEGER, time_updated INTEGER, time_compacting INTEGER, time_archived INTEGER);
      CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, time_created INTEGER NOT NULL,
      time_updated INTEGER NOT NULL, data TEXT NOT NULL);
      CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL,
      time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
      CREATE INDEX message_session_time_created_id_idx ON message (session_id, time_created, id);
      CREATE INDEX part_message_id_id_idx ON part (message_id, id);`);
    const rows = (await readFile(rowsFile, "utf8"))
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => JSON.parse(l) as { table: string; row: Record<string, unknown> });
    let session = "";
    for (const { table, row } of rows) {
      if (table === "session" && session === "") session = String(row.id);
      const values: Record<string, unknown> = { ...row };
      if (typeof row.data === "object") values.data = JSON.stringify(row.data);
      const keys = Object.keys(values);
      db.prepare(`INSERT INTO ${table} (${keys.join(", ")}) VALUES (${keys.map(() => "?").join(", ")})`).run(
        ...keys.map((k) => values[k] as string | number | null),
      );
    }
    return session;
  } finally {
    db.close();
  }
}

/** A merged message in the fixtures' spelling (tool fields only for tools). */
export function plainMerged(message: ParsedMessage, source: ChatMessageSource): PlainMergedMessage {
  const role = (ChatRole[message.role] ?? "unspecified").toLowerCase();
  const from = (ChatMessageSource[source] ?? "unspecified").toLowerCase();
  return message.role === ChatRole.TOOL
    ? { source: from, role, toolName: message.toolName ?? "", toolTarget: message.toolTarget ?? "", text: message.text }
    : { source: from, role, text: message.text };
}

/** The CLI enum of a fixture folder's CLI. */
export const FIXTURE_CLIS = { claude: Cli.CLAUDE, codex: Cli.CODEX, opencode: Cli.OPENCODE } as const;
