import { copyFile, mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CopilotConversations } from "./copilot-conversations.js";

const FIXTURES = join(import.meta.dirname, "fixtures");
/** The session of the fixtures' log (its session.start names it). */
const SESSION_ID = "717664fb-de06-4c1c-9c26-d5630ca6c7d0";
const temps: string[] = [];
afterAll(async () => {
  await Promise.all(temps.map((d) => rm(d, { recursive: true, force: true })));
});

describe("Copilot CLI conversations", () => {
  it("lists each session folder's log with its id, folder and prompts, resumed by --resume=<id>", async () => {
    const home = await mkdtemp(join(tmpdir(), "sa-copilot-conv-"));
    temps.push(home);
    const dir = join(home, ".copilot", "session-state", SESSION_ID);
    await mkdir(dir, { recursive: true });
    await copyFile(join(FIXTURES, "chat-history", "1.0.102", "conversation.jsonl"), join(dir, "events.jsonl"));
    // A folder without a log yet (a session started, nothing typed) is not a conversation.
    await mkdir(join(home, ".copilot", "session-state", "empty"), { recursive: true });
    const source = new CopilotConversations();
    const logs = await source.logs({ HOME: home });
    expect(logs.map((l) => l.path)).toEqual([join(dir, "events.jsonl")]);
    const [log] = logs;
    if (!log) throw new Error("no log");
    expect(await source.summarize(log)).toMatchObject({
      id: SESSION_ID,
      cwd: "/home/me/proj",
      firstPrompt: "hello there",
      lastPrompt: "a multiline reply",
      turnCount: 6,
    });
    expect(source.resumeArgs(SESSION_ID)).toEqual([`--resume=${SESSION_ID}`]);
  });
});
