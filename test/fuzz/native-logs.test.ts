import { mkdir, mkdtemp, open, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Cli } from "../../gen/staragent/v1/session_pb.js";
import { readLinesBackward, readLinesForward } from "../../services/node/agents/backward-lines.js";
import type { ChatHistoryReader, ChatLogRef } from "../../services/node/agents/chat-history.js";
import { readLiveState } from "../../services/node/agents/claude/sessions-file.js";
import { claudeTranscriptReducer } from "../../services/node/agents/claude/transcript.js";
import { codexRolloutReducer } from "../../services/node/agents/codex/rollout.js";
import { readSessionMetaCwd } from "../../services/node/agents/codex/rollout-finder.js";
import { copilotEventsReducer } from "../../services/node/agents/copilot/events.js";
import { droidSessionReducer } from "../../services/node/agents/droid/session.js";
import { type JsonRecord, type LifecycleReducer, parseRecord } from "../../services/node/agents/log-follower.js";
import { queryTurn } from "../../services/node/agents/opencode/opencode-db.js";
import { piSessionReducer } from "../../services/node/agents/pi/session-log.js";
import { createBuiltInAgents } from "../../services/node/agents/registry.js";
import { liveTail } from "../../services/node/chat/chat-merge.js";
import { type AgentFixtureSetup, loadFixtureSetup } from "../support/agent-fixture-setup.js";
import { historyCaseFolders, placeCaseLog } from "../support/chat-history-fixtures.js";
import { fixtureFiles, fuzz, mutateJson, mutateJsonl, mutateRows, mutateText, type Random } from "./fuzz.js";

const AGENTS = join(import.meta.dirname, "../../services/node/agents");
/** A live state file as Claude Code 2.1.x writes it (docs/status.md, "Per CLI"). */
const LIVE_STATE = {
  pid: 4242,
  sessionId: "5f0c2a6e-8d7b-4c1e-9a3f-2b6d8e4f1a7c",
  cwd: "/home/me/proj",
  startedAt: 1771056600000,
  status: "waiting",
  waitingFor: "permission prompt",
  updatedAt: 1771056610000,
  tmux: "work:@1.%1",
};
const TURNS = ["active", "completed", "interrupted", "none"];

/**
 * Replays `text` as the log follower does, both ways: backward from the end to the record that
 * opens a turn (then oldest first), and forward from the start. Returns both states.
 */
function replay<S>(reducer: LifecycleReducer<S>, text: string): [S, S] {
  const records = text
    .split("\n")
    .map((line) => parseRecord(line))
    .filter((r): r is JsonRecord => r !== undefined);
  let forward = reducer.initial();
  for (const record of records) forward = reducer.apply(forward, record);
  const newestFirst: JsonRecord[] = [];
  for (let i = records.length - 1; i >= 0; i--) {
    const record = records[i] as JsonRecord;
    newestFirst.push(record);
    if (reducer.opensTurn(record)) break;
  }
  let backward = reducer.initial();
  for (let i = newestFirst.length - 1; i >= 0; i--) backward = reducer.apply(backward, newestFirst[i] as JsonRecord);
  return [forward, backward];
}

/**
 * Reads a log whole with `reader`, then page by page (`page` messages each) with `walker`: ids are
 * safe integers that increase, the pages cover the same messages, and lining the log up with a screen
 * of its messages never throws.
 */
async function readAndPage(
  reader: ChatHistoryReader | undefined,
  walker: ChatHistoryReader | undefined,
  log: ChatLogRef,
  page: number,
): Promise<void> {
  if (!reader || !walker) throw new Error("a module with a history has a reader");
  const whole = await reader.read(log, { limit: 500 });
  if (!whole) throw new Error("a readable log must give a window");
  const ids = whole.messages.map((m) => m.id);
  expect(ids.every((id, i) => Number.isSafeInteger(id) && (i === 0 || id > (ids[i - 1] ?? 0)))).toBe(true);
  const paged: number[] = [];
  let before: number | undefined;
  for (let guard = 0; guard <= ids.length + 1; guard++) {
    const window = await walker.read(log, { limit: page, before });
    if (!window) throw new Error("a page must be readable");
    paged.unshift(...window.messages.map((m) => m.id));
    if (!window.hasMore) break;
    before = window.olderBefore;
  }
  expect(paged).toEqual(ids);
  const screen = whole.messages.filter((_, i) => i % 2 === 0).reverse();
  expect(liveTail(whole.messages, screen).tail.length).toBeLessThanOrEqual(screen.length);
}

/** The JSONL fixtures of one CLI. */
function jsonlFixtures(cli: string): string[] {
  return fixtureFiles([join(AGENTS, cli, "fixtures")], ".jsonl").map(([, text]) => text);
}

describe("fuzz: native logs", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "sa-fuzz-logs-"));
    await mkdir(join(dir, "sessions"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("Claude Code transcripts: the reducer never throws and always names a turn", async () => {
    const fixtures = jsonlFixtures("claude");
    await fuzz(
      "claude transcript",
      (r) => mutateJsonl(r, r.pick(fixtures)),
      (text) => {
        for (const state of replay(claudeTranscriptReducer, text)) {
          expect(TURNS).toContain(state.turn);
          expect(typeof state.promptUuid).toBe("string");
          expect(state.pending.every((p) => typeof p.id === "string" && typeof p.name === "string")).toBe(true);
        }
      },
    );
  });

  it("Codex rollouts: the reducer never throws and always names a turn", async () => {
    const fixtures = jsonlFixtures("codex");
    await fuzz(
      "codex rollout",
      (r) => mutateJsonl(r, r.pick(fixtures)),
      (text) => {
        for (const state of replay(codexRolloutReducer, text)) {
          expect(TURNS).toContain(state.turn);
          expect(typeof state.completionId).toBe("string");
          expect(state.pendingCalls.every((c) => typeof c === "string")).toBe(true);
        }
      },
    );
  });

  it("Copilot CLI event logs: the reducer never throws and always names a turn", async () => {
    const fixtures = jsonlFixtures("copilot");
    await fuzz(
      "copilot events",
      (r) => mutateJsonl(r, r.pick(fixtures)),
      (text) => {
        for (const state of replay(copilotEventsReducer, text)) {
          expect(TURNS).toContain(state.turn);
          expect(typeof state.completionId).toBe("string");
          expect(typeof state.lastUserTurn).toBe("string");
        }
      },
    );
  });

  it("pi session files: the reducer never throws and always names a turn", async () => {
    const fixtures = jsonlFixtures("pi");
    await fuzz(
      "pi sessions",
      (r) => mutateJsonl(r, r.pick(fixtures)),
      (text) => {
        for (const state of replay(piSessionReducer, text)) {
          expect(TURNS).toContain(state.turn);
          expect(typeof state.completionId).toBe("string");
          expect(typeof state.lastUserTurn).toBe("string");
        }
      },
    );
  });

  it("Factory droid session logs: the reducer never throws and always names a turn", async () => {
    const fixtures = jsonlFixtures("droid");
    await fuzz(
      "droid session",
      (r) => mutateJsonl(r, r.pick(fixtures)),
      (text) => {
        for (const state of replay(droidSessionReducer, text)) {
          expect(TURNS).toContain(state.turn);
          expect(typeof state.completionId).toBe("string");
          expect(typeof state.lastUserTurn).toBe("string");
        }
      },
    );
  });

  it("opencode rows: the query never throws, whatever the rows' JSON holds", async () => {
    const rows = jsonlFixtures("opencode")
      .flatMap((text) => text.split("\n"))
      .filter((l) => l !== "")
      .map((l) => JSON.parse(l) as { table: string; row: Record<string, unknown> });
    const db = new Database(":memory:");
    db.exec(`CREATE TABLE session (id TEXT, project_id TEXT, parent_id TEXT, slug TEXT, directory TEXT,
      title TEXT, version TEXT, time_created INTEGER, time_updated INTEGER, time_compacting INTEGER, time_archived INTEGER);
      CREATE TABLE message (id TEXT, session_id TEXT, time_created INTEGER, time_updated INTEGER, data TEXT);
      CREATE TABLE part (id TEXT, message_id TEXT, session_id TEXT, time_created INTEGER, time_updated INTEGER, data TEXT);`);
    const columns: Record<string, string[]> = {
      session: ["id", "parent_id", "directory", "time_updated"],
      message: ["id", "session_id", "time_created", "data"],
      part: ["id", "message_id", "data"],
    };
    try {
      await fuzz(
        "opencode rows",
        (r) => opencodeRows(r, rows),
        (picked) => {
          for (const table of ["session", "message", "part"]) db.exec(`DELETE FROM ${table}`);
          for (const { table, values } of picked) {
            const keys = columns[table] ?? [];
            db.prepare(`INSERT INTO ${table} (${keys.join(", ")}) VALUES (${keys.map(() => "?").join(", ")})`).run(
              ...keys.map((k) => values[k] ?? null),
            );
          }
          const state = queryTurn(db, "/home/me/proj");
          expect(TURNS).toContain(state.turn);
        },
      );
    } finally {
      db.close();
    }
  });

  it("the backward line reader returns exactly the complete lines, newest first, for any bytes and block size", async () => {
    const path = join(dir, "lines.bin");
    await fuzz(
      "backward lines",
      (r) => ({ bytes: linesOfBytes(r), block: 1 + r.int(48) }),
      async ({ bytes, block }) => {
        await writeFile(path, bytes);
        const file = await open(path, "r");
        try {
          const seen: string[] = [];
          const result = await readLinesBackward(
            file,
            bytes.length,
            (line) => {
              seen.push(line.toString("latin1"));
              return false;
            },
            { blockBytes: block },
          );
          const text = bytes.toString("latin1");
          const lastNewline = text.lastIndexOf("\n");
          const complete =
            lastNewline < 0
              ? []
              : text
                  .slice(0, lastNewline)
                  .split("\n")
                  .filter((l) => l !== "");
          expect(seen).toEqual([...complete].reverse());
          expect(result.end).toBe(lastNewline + 1);
          const forward = await readLinesForward(file, 0, bytes.length);
          expect(forward.lines.map((l) => l.toString("latin1"))).toEqual(complete);
          expect(forward.end).toBe(lastNewline + 1);
        } finally {
          await file.close();
        }
      },
    );
  });

  it("Claude Code's live state file: never throws, answers only well-formed states", async () => {
    const pid = LIVE_STATE.pid;
    await fuzz(
      "claude sessions file",
      (r) => (r.chance(0.7) ? JSON.stringify(mutateJson(r, LIVE_STATE)) : mutateText(r, JSON.stringify(LIVE_STATE))),
      async (text) => {
        await writeFile(join(dir, "sessions", `${pid}.json`), text);
        const state = await readLiveState(dir, pid);
        const wellFormed =
          state === undefined ||
          (["idle", "busy", "waiting", ""].includes(state.status) && /^[A-Za-z0-9_-]{1,128}$/.test(state.sessionId));
        expect(wellFormed).toBe(true);
      },
    );
  });

  it("chat history of every CLI that keeps a native log: never throws, ids increase, pages cover the same messages", async () => {
    // Every module of the registry with a history reader, over its own chat-history fixtures: a new
    // CLI is in this by its fixtures alone.
    const logs: { cli: Cli; setup: AgentFixtureSetup | undefined; text: string }[] = [];
    for (const module of createBuiltInAgents().modules.filter((m) => m.history)) {
      const setup = await loadFixtureSetup(AGENTS, module.name);
      for (const { dir, cases } of await historyCaseFolders(join(AGENTS, module.name, "fixtures/chat-history"))) {
        for (const log of new Set(cases.map((c) => c.log))) {
          logs.push({ cli: module.cli, setup, text: await readFile(join(dir, log), "utf8") });
        }
      }
    }
    expect(new Set(logs.map((l) => l.cli)).size).toBeGreaterThanOrEqual(8);
    await fuzz(
      "chat history",
      (r) => {
        const { cli, setup, text } = r.pick(logs);
        return {
          cli,
          setup,
          text: setup?.placeHistoryLog ? mutateRows(r, text) : mutateJsonl(r, text),
          page: 1 + r.int(4),
        };
      },
      async ({ cli, setup, text, page }) => {
        const source = join(await mkdtemp(join(dir, "history-")), "log");
        await writeFile(source, text);
        const c = { name: "fuzz", what: "", log: basename(source), screen: "inline:" };
        // Rows a database refuses (a mutated row of the wrong shape) are the setup's, not the reader's.
        const placed = await placeCaseLog(cli, setup, dirname(source), c, dir).catch(() => undefined);
        if (!placed) return;
        const { log } = placed;
        // Fresh readers (nothing kept from an earlier read), closed after (a database's connections).
        const [first, second] = [createBuiltInAgents(), createBuiltInAgents()];
        try {
          await readAndPage(first.historyFor(cli), second.historyFor(cli), log, page);
        } finally {
          first.close();
          second.close();
        }
      },
    );
  });

  it("a Codex rollout's first line: the cwd reader never throws", async () => {
    const fixtures = jsonlFixtures("codex");
    const path = join(dir, "rollout.jsonl");
    await fuzz(
      "codex session meta",
      (r) => mutateJsonl(r, r.pick(fixtures)),
      async (text) => {
        await writeFile(path, text);
        expect(typeof (await readSessionMetaCwd(path))).toBe("string");
      },
    );
  });
});

/** Rows for opencode's tables: the fixture's rows with their JSON and columns mutated, some dropped or doubled. */
function opencodeRows(
  r: Random,
  rows: ReadonlyArray<{ table: string; row: Record<string, unknown> }>,
): Array<{ table: string; values: Record<string, string | number | null> }> {
  const out: Array<{ table: string; values: Record<string, string | number | null> }> = [];
  for (const { table, row } of rows) {
    if (r.chance(0.1)) continue;
    const copies = r.chance(0.1) ? 2 : 1;
    for (let c = 0; c < copies; c++) {
      const values: Record<string, string | number | null> = {};
      for (const [key, value] of Object.entries(row)) {
        if (key === "data") {
          values.data = r.chance(0.6)
            ? JSON.stringify(mutateJson(r, value))
            : r.chance(0.5)
              ? mutateText(r, JSON.stringify(value))
              : JSON.stringify(value);
        } else if (typeof value === "string" || typeof value === "number" || value === null) {
          values[key] = r.chance(0.1) ? r.pick([null, "", -1, r.text(20)]) : value;
        }
      }
      out.push({ table, values });
    }
  }
  return out;
}

/** Random bytes with newlines scattered through them (and now and then none at all). */
function linesOfBytes(r: Random): Buffer {
  const bytes = r.bytes(600);
  const newlines = r.chance(0.1) ? 0 : r.int(bytes.length / 4 + 1);
  for (let i = 0; i < newlines && bytes.length > 0; i++) bytes[r.int(bytes.length)] = 0x0a;
  return bytes;
}
