import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { type ConversationLog, type ConversationSource, JsonlSummaries, jsonlFiles } from "../conversations.js";
import { stringField } from "../record-fields.js";
import { piSessionMapper } from "./pi-history.js";
import { piAgentDir, piSessionsFolder } from "./pi-home.js";

/**
 * pi's past conversations: one file per session under `sessions/--<cwd>--/` of its agent folder,
 * opening with a `session` record (the id and `cwd`), resumed with `pi --session <id>`.
 */
export class PiConversations implements ConversationSource {
  readonly program = "pi";
  private readonly summaries = new JsonlSummaries(piSessionMapper, {
    id: (record) => (record?.type === "session" ? stringField(record, "id") : ""),
    cwd: (record) => (record.type === "session" ? stringField(record, "cwd") : ""),
  });

  resumeArgs(id: string): string[] {
    return ["--session", id];
  }

  async logs(env: Readonly<Record<string, string | undefined>>, cwd: string | undefined): Promise<ConversationLog[]> {
    const agentDir = piAgentDir(env);
    if (cwd !== undefined) return sortedNewestFirst(await jsonlFiles(piSessionsFolder(agentDir, cwd)));
    const root = join(agentDir, "sessions");
    const folders = await readdir(root).catch(() => [] as string[]);
    const lists = await Promise.all(folders.map((folder) => jsonlFiles(join(root, folder))));
    return sortedNewestFirst(lists.flat());
  }

  summarize(log: ConversationLog) {
    return this.summaries.summarize(log);
  }
}

function sortedNewestFirst(logs: ConversationLog[]): ConversationLog[] {
  return logs.sort((a, b) => b.mtimeMs - a.mtimeMs);
}
