import { readdir } from "node:fs/promises";
import { basename, join } from "node:path";
import { type ConversationLog, type ConversationSource, JsonlSummaries, jsonlFiles } from "../conversations.js";
import { stringField } from "../record-fields.js";
import { droidSessionMapper } from "./droid-history.js";
import { droidSessionsFolder, factoryHome } from "./droid-home.js";

/**
 * Factory droid's past conversations: its session logs under `sessions/<cwd>/`, one per session
 * (`<session id>.jsonl`, whose `session_start` names the folder), resumed with `droid --resume <id>`.
 */
export class DroidConversations implements ConversationSource {
  readonly program = "droid";
  private readonly summaries = new JsonlSummaries(droidSessionMapper, {
    id: (_record, path) => basename(path, ".jsonl"),
    cwd: (record) => (record.type === "session_start" ? stringField(record, "cwd") : ""),
  });

  resumeArgs(id: string): string[] {
    return ["--resume", id];
  }

  async logs(env: Readonly<Record<string, string | undefined>>, cwd: string | undefined): Promise<ConversationLog[]> {
    const home = factoryHome(env);
    if (cwd !== undefined) return jsonlFiles(droidSessionsFolder(home, cwd));
    const sessions = join(home, "sessions");
    const dirs = await readdir(sessions).catch(() => [] as string[]);
    return (await Promise.all(dirs.map((d) => jsonlFiles(join(sessions, d))))).flat();
  }

  summarize(log: ConversationLog) {
    return this.summaries.summarize(log);
  }
}
