import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { conversationLogKey } from "../conversations.js";
import { OPENCODE_SCHEMA } from "./fixtures/setup.js";
import { OpencodeConversations } from "./opencode-conversations.js";

/**
 * opencode's past conversations from its database (the 1.18 tables the readers use): root sessions
 * only, newest first, filtered by folder, each summarised from its user messages' text parts.
 */
describe("OpencodeConversations", () => {
  let dir: string;
  let dbPath: string;
  const env = () => ({ XDG_DATA_HOME: dir });
  const source = new OpencodeConversations();

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "sa-oc-conversations-"));
    await mkdir(join(dir, "opencode"));
    dbPath = join(dir, "opencode", "opencode.db");
    const db = new Database(dbPath);
    db.pragma("journal_mode = WAL");
    db.exec(OPENCODE_SCHEMA);
    const session = (id: string, directory: string, updated: number, parent: string | null = null) =>
      db
        .prepare("INSERT INTO session (id, parent_id, directory, time_created, time_updated) VALUES (?, ?, ?, ?, ?)")
        .run(id, parent, directory, updated - 1000, updated);
    let n = 0;
    const message = (sessionId: string, role: string, texts: Array<{ text: string; synthetic?: boolean }>) => {
      const id = `msg_${String(++n).padStart(4, "0")}`;
      db.prepare("INSERT INTO message VALUES (?, ?, ?, ?, ?)").run(id, sessionId, n, n, JSON.stringify({ role }));
      for (const [i, t] of texts.entries()) {
        db.prepare("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)").run(
          `prt_${id}_${i}`,
          id,
          sessionId,
          n,
          n,
          JSON.stringify({ type: "text", ...t }),
        );
      }
    };
    session("ses_old", "/src/app", 1_000_000);
    message("ses_old", "user", [{ text: "first  question\nabout the app" }]);
    message("ses_old", "assistant", [{ text: "an answer" }]);
    message("ses_old", "user", [{ text: "context", synthetic: true }, { text: "second question" }]);
    session("ses_new", "/src/app", 2_000_000);
    message("ses_new", "user", [{ text: "newer work" }]);
    session("ses_child", "/src/app", 3_000_000, "ses_new");
    message("ses_child", "user", [{ text: "a subagent's task" }]);
    session("ses_other", "/src/other", 1_500_000);
    message("ses_other", "user", [{ text: "elsewhere" }]);
    session("ses_empty", "/src/app", 2_500_000);
    message("ses_empty", "user", [{ text: "only synthetic", synthetic: true }]);
    db.close();
  });

  afterAll(async () => {
    source.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("lists the root sessions of a folder newest first and summarises each from its prompts", async () => {
    const logs = await source.logs(env(), "/src/app");
    expect(logs.map((l) => [l.path, l.mtimeMs])).toEqual([
      [conversationLogKey(dbPath, "ses_empty"), 2_500_000],
      [conversationLogKey(dbPath, "ses_new"), 2_000_000],
      [conversationLogKey(dbPath, "ses_old"), 1_000_000],
    ]);
    const summaries = await Promise.all(logs.map((l) => source.summarize(l)));
    // A session with no prompt a person typed is no conversation to resume.
    expect(summaries[0]).toBeUndefined();
    expect(summaries.slice(1).map((s) => s && [s.id, s.cwd, s.firstPrompt, s.lastPrompt, s.turnCount])).toEqual([
      ["ses_new", "/src/app", "newer work", "newer work", 1],
      ["ses_old", "/src/app", "first question about the app", "second question", 2],
    ]);
    expect(summaries[1]?.logPath).toBe(conversationLogKey(dbPath, "ses_new"));
  });

  it("lists every folder's root sessions without a folder, none without a database, and resumes with --session", async () => {
    expect((await source.logs(env(), undefined)).map((l) => l.path.split("\0")[1])).toEqual([
      "ses_empty",
      "ses_new",
      "ses_other",
      "ses_old",
    ]);
    expect(await source.logs({ XDG_DATA_HOME: join(dir, "missing") }, undefined)).toEqual([]);
    expect(source.resumeArgs("ses_new")).toEqual(["--session", "ses_new"]);
  });
});
