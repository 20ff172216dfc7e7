import { createWriteStream } from "node:fs";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { Cli } from "../gen/staragent/v1/session_pb.js";
import type { ChatLogRef } from "../services/node/agents/chat-history.js";
import { ClaudeTranscriptHistory } from "../services/node/agents/claude/transcript-history.js";
import { CodexRolloutHistory } from "../services/node/agents/codex/rollout-history.js";
import { OpencodeSessionHistory } from "../services/node/agents/opencode/session-history.js";
import { answerLogChat } from "../services/node/chat/log-chat.js";
import { chatParserFor } from "../services/node/chat/parser-registry.js";

/** Log sizes measured (the goal: newest page p50 under 5 ms, 1 GB / 1 MB under 2). */
const SIZES: readonly [string, number][] = [
  ["1 MB", 1024 ** 2],
  ["1 GB", 1024 ** 3],
];
/** Reads per size and mode. */
const ITERATIONS = 200;
/** The page GetChat reads when asked for none in particular (DEFAULT_PAGE_SIZE). */
const PAGE = 50;
/**
 * Average size of a metadata record in the recorded sessions (Claude Code 2.1.332: attachments and
 * request dumps of 0.1 to 64 KB, 6.6 KB on average; Codex 0.171: turn contexts and world states of
 * about 3.7 KB). The fixtures keep them shortened; the benchmark gives them back this weight, so a
 * page walks past as many bytes as in a real log.
 */
const CLAUDE_METADATA_BYTES = 6_600;
const CODEX_METADATA_BYTES = 3_700;
/** The recorded conversations the logs repeat (docs/chat.md "Tests"). */
const FIXTURES = join(import.meta.dirname, "../services/node/agents");

interface Subject {
  readonly label: string;
  readonly cli: Cli;
  /** Builds a log of about `bytes`; returns what to read and the screen to merge. */
  build(dir: string, bytes: number): Promise<{ log: ChatLogRef; size: number }>;
  reader(): { read: ClaudeTranscriptHistory["read"]; clear(): void };
  readonly screen: string;
}

/**
 * The newest chat page (50 messages, GetChat's default) from a native log of about 1 MB and 1 GB,
 * per CLI: Claude Code's transcript and Codex's rollout (the recorded conversation of the fixtures
 * repeated to the size, metadata records at their real weight), opencode's database (one session
 * with as many messages as fill the size). cold = a new reader per read (what the first GetChat
 * after a start costs: stat, open, backward walk, parse); warm = a reader that read the log before
 * (a follower's GetChat: a stat); merge = lining up the recorded screen with the page. The files
 * are freshly written, so the OS has them in its page cache. Prints p50/p95 in ms.
 */
export async function run(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "sa-bench-chat-"));
  try {
    console.log("cli        log      mode   p50 ms   p95 ms   messages");
    for (const subject of SUBJECTS) {
      const p50s = new Map<string, number>();
      for (const [label, bytes] of SIZES) {
        const { log, size } = await subject.build(dir, bytes);
        const screen = chatParserFor(subject.cli).parse(
          (await readFile(join(FIXTURES, subject.screen), "utf8")).replace(/\n$/, "").split("\n"),
        );
        const warm = subject.reader();
        let count = 0;
        for (const mode of ["cold", "warm", "merge"] as const) {
          const times: number[] = [];
          for (let i = 0; i < ITERATIONS; i++) {
            const reader = mode === "cold" ? subject.reader() : warm;
            const start = process.hrtime.bigint();
            const window = await reader.read(log, { limit: PAGE });
            if (!window) throw new Error(`${subject.label}: the log could not be read`);
            if (mode === "merge") answerLogChat(window, screen, PAGE, undefined);
            times.push(Number(process.hrtime.bigint() - start) / 1e6);
            count = window.messages.length;
            if (mode === "cold") reader.clear();
          }
          times.sort((a, b) => a - b);
          const p50 = times[Math.floor(times.length / 2)] ?? 0;
          const p95 = times[Math.floor(times.length * 0.95)] ?? 0;
          if (mode === "cold") p50s.set(label, p50);
          const sizeLabel = `${label} (${(size / 1024 ** 2).toFixed(size < 10 * 1024 ** 2 ? 1 : 0)} MiB)`;
          console.log(
            `${subject.label.padEnd(10)} ${sizeLabel.padEnd(18)} ${mode.padEnd(6)} ${p50.toFixed(3).padStart(7)}  ${p95.toFixed(3).padStart(7)}   ${count}`,
          );
        }
        warm.clear();
        await rm(log.path, { force: true });
        await rm(`${log.path}-wal`, { force: true });
        await rm(`${log.path}-shm`, { force: true });
      }
      const ratio = (p50s.get("1 GB") ?? 0) / (p50s.get("1 MB") ?? 1);
      console.log(`${subject.label.padEnd(10)} cold p50 ratio 1 GB / 1 MB: ${ratio.toFixed(2)}`);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A JSONL log of about `bytes`: the recorded conversation written again and again. */
async function repeatedJsonl(
  dir: string,
  name: string,
  conversation: string,
  bytes: number,
  heavy: ReadonlySet<string>,
  weight: number,
) {
  const lines = (await readFile(conversation, "utf8")).split("\n").filter((l) => l !== "");
  const copy = `${lines.map((l) => weigh(l, heavy, weight)).join("\n")}\n`;
  const path = join(dir, name);
  const out = createWriteStream(path);
  let written = 0;
  while (written < bytes) {
    if (!out.write(copy)) await new Promise<void>((r) => out.once("drain", () => r()));
    written += Buffer.byteLength(copy);
  }
  await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
  return { log: { path, session: "" }, size: (await stat(path)).size };
}

/** A metadata record brought back to its real weight (a padding field); other records as they are. */
function weigh(line: string, heavy: ReadonlySet<string>, weight: number): string {
  const record = JSON.parse(line) as Record<string, unknown>;
  if (!heavy.has(String(record.type))) return line;
  return JSON.stringify({ ...record, padding: "x".repeat(Math.max(0, weight - line.length)) });
}

const SUBJECTS: readonly Subject[] = [
  {
    label: "claude",
    cli: Cli.CLAUDE,
    build: (dir, bytes) =>
      repeatedJsonl(
        dir,
        "transcript.jsonl",
        join(FIXTURES, "claude/fixtures/chat-history/2.1.332/conversation.jsonl"),
        bytes,
        new Set(["attachment", "api-request-shape", "api-request-blob", "api-request"]),
        CLAUDE_METADATA_BYTES,
      ),
    reader: () => new ClaudeTranscriptHistory(),
    screen: "claude/fixtures/chat-history/2.1.332/after-compaction.screen.txt",
  },
  {
    label: "codex",
    cli: Cli.CODEX,
    build: (dir, bytes) =>
      repeatedJsonl(
        dir,
        "rollout.jsonl",
        join(FIXTURES, "codex/fixtures/chat-history/0.171.0/conversation.jsonl"),
        bytes,
        new Set(["turn_context", "world_state", "session_meta"]),
        CODEX_METADATA_BYTES,
      ),
    reader: () => new CodexRolloutHistory(),
    screen: "codex/fixtures/chat-history/0.171.0/after-compaction.screen.txt",
  },
  {
    label: "opencode",
    cli: Cli.OPENCODE,
    build: opencodeDatabase,
    reader: () => new OpencodeSessionHistory(),
    screen: "opencode/fixtures/chat-history/1.18.33/after-compaction.screen.txt",
  },
];

/** Rows of the recorded opencode conversation (one `{table,row}` per line). */
interface Row {
  readonly table: string;
  readonly row: Record<string, unknown>;
}

/**
 * An opencode.db of about `bytes` holding one session: the recorded conversation's messages and
 * parts inserted again and again (new ids, later times), with opencode's indexes.
 */
async function opencodeDatabase(dir: string, bytes: number): Promise<{ log: ChatLogRef; size: number }> {
  const rows = (
    await readFile(join(FIXTURES, "opencode/fixtures/chat-history/1.18.33/after-compaction.rows.jsonl"), "utf8")
  )
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Row);
  const path = join(dir, "opencode.db");
  const db = new Database(path);
  try {
    db.pragma("journal_mode = WAL");
    db.exec(`CREATE TABLE session (id TEXT PRIMARY KEY, directory TEXT, parent_id TEXT, time_created INTEGER, time_updated INTEGER);
      CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, time_created INTEGER NOT NULL,
      time_updated INTEGER NOT NULL, data TEXT NOT NULL);
      CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL,
      time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
      CREATE INDEX message_session_time_created_id_idx ON message (session_id, time_created, id);
      CREATE INDEX part_message_id_id_idx ON part (message_id, id);
      CREATE INDEX part_session_idx ON part (session_id);`);
    const session = "ses_bench";
    db.prepare("INSERT INTO session VALUES (?, ?, NULL, 0, 0)").run(session, "/home/me/proj");
    const message = db.prepare("INSERT INTO message VALUES (?, ?, ?, ?, ?)");
    const part = db.prepare("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)");
    const messages = rows.filter((r) => r.table === "message").map((r) => r.row);
    const parts = rows.filter((r) => r.table === "part").map((r) => r.row);
    // Copies inserted between size checks: about a fiftieth of the target (a copy is about 16 KB).
    const step = Math.max(10, Math.floor(bytes / (16 * 1024) / 50));
    let copy = 0;
    const insertCopy = db.transaction((n: number) => {
      for (const m of messages) {
        const id = `${m.id}_${n}`;
        const at = Number(m.time_created) + n * 60_000;
        message.run(id, session, at, at, JSON.stringify(m.data));
        for (const p of parts.filter((x) => x.message_id === m.id)) {
          part.run(`${p.id}_${n}`, id, session, at, at, JSON.stringify(p.data));
        }
      }
    });
    for (;;) {
      for (let i = 0; i < step; i++) insertCopy(copy++);
      db.pragma("wal_checkpoint(TRUNCATE)");
      if ((await stat(path)).size >= bytes || copy > 1_000_000) break;
    }
    return { log: { path, session }, size: (await stat(path)).size };
  } finally {
    db.close();
  }
}
