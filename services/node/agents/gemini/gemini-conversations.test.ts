import { copyFile, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Cli } from "../../../../gen/staragent/v1/session_pb.js";
import { PastConversations } from "../../past-conversations.js";
import { createBuiltInAgents } from "../registry.js";

/** A conversation recorded from Gemini CLI 0.61.0, and where it ran. */
const RECORDED = join(import.meta.dirname, "fixtures/chat-history/0.61.0/conversation.jsonl");
const RECORDED_ID = "bad9c68e-ab2d-4bfc-90d6-3d75516cadcf";
const CWD = "/home/me/proj";

describe("Gemini CLI's past conversations", () => {
  const scratch: string[] = [];
  afterEach(async () => {
    for (const dir of scratch.splice(0)) await rm(dir, { recursive: true, force: true });
  });

  it("lists a conversation by its whole id and resumes it, though its file is named by the id's first 8 digits", async () => {
    const home = await mkdtemp(join(tmpdir(), "sa-gemini-conv-"));
    scratch.push(home);
    const project = join(home, ".gemini", "tmp", "proj");
    await mkdir(join(project, "chats"), { recursive: true });
    await writeFile(join(project, ".project_root"), CWD);
    await writeFile(join(home, ".gemini", "projects.json"), JSON.stringify({ projects: { [CWD]: "proj" } }));
    await copyFile(RECORDED, join(project, "chats", `session-2026-12-02T00-05-${RECORDED_ID.slice(0, 8)}.jsonl`));
    const agents = createBuiltInAgents();
    const past = new PastConversations({ agents, env: { HOME: home }, openLogs: async () => new Map() });
    try {
      const { conversations } = await past.list(CWD, Cli.GEMINI, 0, "");
      expect(conversations.map((c) => c.id)).toEqual([RECORDED_ID]);
      expect(await past.resumeCommand(Cli.GEMINI, RECORDED_ID, [])).toEqual(["gemini", "--resume", RECORDED_ID]);
    } finally {
      agents.close();
    }
  });
});
