import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { OPENCODE_SCHEMA } from "./fixtures/setup.js";
import { OpencodeDb } from "./opencode-db.js";

const T0 = 1_796_000_000_000;

/** An opencode database with sessions `a` and `b`, each with one finished turn. */
function seed(path: string): Database.Database {
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.exec(OPENCODE_SCHEMA);
  for (const id of ["a", "b"]) {
    db.prepare(
      "INSERT INTO session (id, parent_id, directory, time_created, time_updated) VALUES (?, NULL, '/w', ?, ?)",
    ).run(id, T0, T0);
    addTurn(db, id, 1, `answer of ${id}`, T0);
  }
  return db;
}

/** Adds a user message and its finished answer (one text part) to session `id`, at `at`. */
function addTurn(db: Database.Database, id: string, n: number, text: string, at: number): void {
  const user = `${id}-u${n}`;
  const answer = `${id}-r${n}`;
  const message = db.prepare(
    "INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?)",
  );
  message.run(user, id, at, at, JSON.stringify({ role: "user", time: { created: at } }));
  message.run(
    answer,
    id,
    at + 1,
    at + 1,
    JSON.stringify({ role: "assistant", parentID: user, finish: "stop", time: { created: at + 1, completed: at + 2 } }),
  );
  db.prepare(
    "INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?, ?)",
  ).run(`${answer}-p`, answer, id, at + 1, at + 1, JSON.stringify({ type: "text", text }));
}

describe("OpencodeDb: one session's answers across writes of another", () => {
  let dir: string;
  let writer: Database.Database;
  let reader: OpencodeDb;
  let path: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "sa-opencode-db-"));
    path = join(dir, "opencode.db");
    writer = seed(path);
    reader = new OpencodeDb();
  });

  afterEach(async () => {
    vi.restoreAllMocks();
    reader.close();
    writer.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("keeps b's answer while only a is written, reads it again when b's rows change or the trust runs out", async () => {
    const now = vi.spyOn(Date, "now").mockReturnValue(T0 + 60_000);
    expect((await reader.readSession(path, "b"))?.replyText).toBe("answer of b");

    // A row of b changed in place with its update time kept: invisible to b's version, so b's answer
    // is kept while a's writes change the database, which shows it is not read again.
    writer
      .prepare("UPDATE part SET data = ? WHERE id = 'b-r1-p'")
      .run(JSON.stringify({ type: "text", text: "edited" }));
    addTurn(writer, "a", 2, "second answer of a", T0 + 10);
    expect((await reader.readSession(path, "a"))?.replyText).toBe("second answer of a");
    expect((await reader.readSession(path, "b"))?.replyText).toBe("answer of b");

    // Past the trust, b is read again although its version did not change.
    now.mockReturnValue(T0 + 60_000 + 10_001);
    expect((await reader.readSession(path, "b"))?.replyText).toBe("edited");

    // A new turn of b changes its version: read at once.
    addTurn(writer, "b", 2, "second answer of b", T0 + 20);
    expect((await reader.readSession(path, "b"))?.replyText).toBe("second answer of b");
    // An update of b's newest part with a new update time, too.
    writer
      .prepare("UPDATE part SET data = ?, time_updated = ? WHERE id = 'b-r2-p'")
      .run(JSON.stringify({ type: "text", text: "streamed on" }), T0 + 25);
    expect((await reader.readSession(path, "b"))?.replyText).toBe("streamed on");
  });

  it("reads the usage sums again when a message is added, and keeps them across another session's writes", async () => {
    vi.spyOn(Date, "now").mockReturnValue(T0 + 60_000);
    const tokens = (n: number) =>
      JSON.stringify({ role: "assistant", parentID: "b-u1", tokens: { input: n, output: 1 } });
    writer.prepare("UPDATE message SET data = ? WHERE id = 'b-r1'").run(tokens(100));
    expect((await reader.readUsage(path, "b"))?.totalInputTokens).toBe(100);
    addTurn(writer, "a", 2, "more", T0 + 10);
    expect((await reader.readUsage(path, "b"))?.totalInputTokens).toBe(100);
    writer
      .prepare("INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES ('b-r1b', 'b', ?, ?, ?)")
      .run(T0 + 30, T0 + 30, tokens(50));
    expect((await reader.readUsage(path, "b"))?.totalInputTokens).toBe(150);
  });
});
