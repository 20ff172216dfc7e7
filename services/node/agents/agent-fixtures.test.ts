import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { PromptKind, SessionStatus, StatusReason } from "../../../gen/staragent/v1/session_pb.js";
import { testPane } from "../../../test/support/panes.js";
import { decideStatus } from "../status/precedence.js";
import type { AgentContext, AgentModule } from "./agent.js";
import { ClaudeModule } from "./claude/claude-module.js";
import { encodeProjectDir } from "./claude/transcript-finder.js";
import { CodexModule } from "./codex/codex-module.js";
import { rolloutFolders } from "./codex/rollout-finder.js";
import { OpencodeModule } from "./opencode/opencode-module.js";
import type { ProcessInfo } from "./process-table.js";

/** One row of a `fixtures/<version range>/cases.json` table. */
interface FixtureCase {
  readonly name: string;
  /** The native log (claude transcript, codex rollout). */
  readonly log?: string;
  /** opencode: `{table,row}` dump loaded into a fresh opencode.db. */
  readonly rows?: string;
  /** claude: the sessions/<pid>.json status. */
  readonly sessions?: "idle" | "busy" | "waiting";
  /** A pane capture file in the same folder, `inline:<text>`, or "" for an unreadable screen. */
  readonly screen?: string;
  readonly title?: string;
  readonly cwd?: string;
  readonly seen?: string;
  readonly logOlderThanProcess?: boolean;
  /** claude: the sessions file's status changed after the transcript's last record (statusUpdatedAt). */
  readonly statusChangedAfterLog?: boolean;
  /** The native log was last written a minute ago (it has been quiet). */
  readonly logQuiet?: boolean;
  /** opencode: rewrite the newest assistant message as finished or failed. */
  readonly finishNewest?: string;
  readonly errorNewest?: string;
  readonly expect: {
    readonly status: keyof typeof SessionStatus;
    readonly reason: keyof typeof StatusReason;
    readonly completionId?: string;
    readonly lastUserTurn?: string;
    readonly promptKind?: keyof typeof PromptKind;
    readonly prompt?: string;
  };
}

const PID = 424242;
const HOUR_MS = 3_600_000;
const FIXTURE_CWD = "/home/me/proj";
/**
 * When the fixtures' CLI process started: before every record in them (their records carry their own
 * times, and a turn opened before the process started belongs to an earlier run).
 */
const FIXTURE_PROCESS_START_MS = Date.UTC(2025, 0, 1);
const temps: string[] = [];

afterAll(async () => {
  await Promise.all(temps.map((d) => rm(d, { recursive: true, force: true })));
});

const CLIS: readonly { cli: string; module: () => AgentModule; argv: string[] }[] = [
  { cli: "claude", module: () => new ClaudeModule(), argv: ["claude"] },
  { cli: "codex", module: () => new CodexModule(), argv: ["node", "/usr/lib/node_modules/@openai/codex/bin/codex.js"] },
  { cli: "opencode", module: () => new OpencodeModule(), argv: ["opencode"] },
];

for (const { cli, module, argv } of CLIS) {
  const root = join(import.meta.dirname, cli, "fixtures");
  const ranges = (await readdir(root)).filter((r) => r !== "chat" && r !== "chat-history").sort();
  for (const range of ranges) {
    const dir = join(root, range);
    const cases = JSON.parse(await readFile(join(dir, "cases.json"), "utf8")) as FixtureCase[];
    describe(`${cli} ${range} fixtures`, () => {
      it.each(cases.map((c) => [c.name, c] as const))("%s", async (_name, fixture) => {
        const home = await mkdtemp(join(tmpdir(), `sa-fixture-${cli}-`));
        temps.push(home);
        const cwd = fixture.cwd ?? FIXTURE_CWD;
        const processStart = new Date(fixture.logOlderThanProcess ? Date.now() + HOUR_MS : FIXTURE_PROCESS_START_MS);
        await placeNativeState(cli, dir, home, fixture, processStart);
        const screen = await screenText(dir, fixture.screen);
        const context = makeContext({ home, cwd, argv, title: fixture.title ?? "", screen, processStart });
        const signals = await module().observe(context);
        const decided = decideStatus(signals, fixture.seen ?? "");
        const got = {
          status: SessionStatus[decided.status],
          reason: StatusReason[decided.reason],
          ...(fixture.expect.completionId !== undefined ? { completionId: signals.completionId } : {}),
          ...(fixture.expect.lastUserTurn !== undefined ? { lastUserTurn: signals.lastUserTurn } : {}),
          ...(fixture.expect.promptKind !== undefined ? { promptKind: PromptKind[signals.prompt?.kind ?? 0] } : {}),
          ...(fixture.expect.prompt !== undefined ? { prompt: signals.prompt?.text } : {}),
        };
        expect(got, signals.detail).toEqual(fixture.expect);
      });
    });
  }
}

async function placeNativeState(
  cli: string,
  dir: string,
  home: string,
  fixture: FixtureCase,
  processStart: Date,
): Promise<void> {
  if (cli === "claude") {
    const sessionId = "3f1c2b7e-8d4a-4c1e-9b6f-0a2d5e7c9b11";
    const projects = join(home, ".claude", "projects", encodeProjectDir(FIXTURE_CWD));
    await mkdir(projects, { recursive: true });
    if (fixture.log) await copyFile(join(dir, fixture.log), join(projects, `${sessionId}.jsonl`));
    if (fixture.sessions) {
      await mkdir(join(home, ".claude", "sessions"), { recursive: true });
      const body = { pid: PID, sessionId, cwd: FIXTURE_CWD, startedAt: processStart.getTime(), version: "2.1.332" };
      const waiting = fixture.sessions === "waiting" ? { waitingFor: "permission prompt" } : {};
      const changed = fixture.statusChangedAfterLog ? { statusUpdatedAt: Date.now() } : {};
      await writeFile(
        join(home, ".claude", "sessions", `${PID}.json`),
        JSON.stringify({ ...body, status: fixture.sessions, ...waiting, ...changed }),
      );
    }
    if (fixture.log && (fixture.sessions === "idle" || fixture.logQuiet)) {
      // Settled: the transcript has been quiet for a while, as after a real turn end.
      const past = new Date(Date.now() - 60_000);
      await utimes(join(projects, `${sessionId}.jsonl`), past, past);
    }
  } else if (cli === "codex" && fixture.log) {
    const [today] = rolloutFolders(join(home, ".codex"), new Date());
    if (!today) throw new Error("no rollout folder for today");
    await mkdir(today, { recursive: true });
    await copyFile(join(dir, fixture.log), join(today, "rollout-2026-01-01T00-00-00-fixture.jsonl"));
  } else if (cli === "opencode" && fixture.rows) {
    await loadOpencodeRows(join(dir, fixture.rows), join(home, ".local", "share", "opencode"), fixture);
  }
}

async function loadOpencodeRows(rowsFile: string, folder: string, fixture: FixtureCase): Promise<void> {
  await mkdir(folder, { recursive: true });
  const db = new Database(join(folder, "opencode.db"));
  try {
    db.pragma("journal_mode = WAL");
    db.exec(`CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT, parent_id TEXT, slug TEXT, directory TEXT,
      title TEXT, version TEXT, time_created INTEGER, time_updated INTEGER, time_compacting INTEGER, time_archived INTEGER);
      CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, time_created INTEGER, time_updated INTEGER, data TEXT);
      CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT, time_created INTEGER, time_updated INTEGER, data TEXT);`);
    const lines = (await readFile(rowsFile, "utf8")).split("\n").filter((l) => l !== "");
    const rows = lines.map((l) => JSON.parse(l) as { table: string; row: Record<string, unknown> });
    const newestAssistant = rows.filter((r) => r.table === "message").at(-1);
    for (const { table, row } of rows) {
      const values = { ...row };
      if (row === newestAssistant?.row) {
        const data = { ...(row.data as Record<string, unknown>) };
        if (fixture.finishNewest) {
          data.finish = fixture.finishNewest;
          data.time = { created: 1771056607000, completed: 1771056612000 };
        }
        if (fixture.errorNewest) data.error = { name: fixture.errorNewest, data: { message: "stopped" } };
        values.data = data;
      }
      if (table === "part" && fixture.finishNewest && JSON.stringify(values.data).includes('"running"')) {
        values.data = { ...(values.data as Record<string, unknown>), state: { status: "completed" } };
      }
      if (typeof values.data === "object") values.data = JSON.stringify(values.data);
      const keys = Object.keys(values);
      db.prepare(`INSERT INTO ${table} (${keys.join(", ")}) VALUES (${keys.map(() => "?").join(", ")})`).run(
        ...keys.map((k) => values[k] as string | number | null),
      );
    }
  } finally {
    db.close();
  }
}

async function screenText(dir: string, screen: string | undefined): Promise<string> {
  if (screen === undefined || screen === "") return "";
  if (screen.startsWith("inline:")) return screen.slice("inline:".length);
  return readFile(join(dir, screen), "utf8");
}

function makeContext(options: {
  home: string;
  cwd: string;
  argv: string[];
  title: string;
  screen: string;
  processStart: Date;
}): AgentContext {
  const pane = testPane({
    sessionName: "agent",
    sessionCreated: Math.floor(options.processStart.getTime() / 1000),
    sessionActivity: Math.floor(Date.now() / 1000),
    panePid: PID - 1,
    paneCurrentCommand: options.argv[0] ?? "",
    paneCurrentPath: options.cwd,
    alternateOn: true,
    paneTitle: options.title,
  });
  const process: ProcessInfo = {
    pid: PID,
    ppid: PID - 1,
    comm: options.argv[0] ?? "",
    argv: options.argv,
    startTicks: 1,
  };
  return {
    pane,
    process,
    processStart: options.processStart,
    env: async () => ({ HOME: options.home }),
    screen: async () => options.screen,
    visibleScreen: async () => `${options.title}\n${options.screen}`,
    siblings: [],
  };
}
