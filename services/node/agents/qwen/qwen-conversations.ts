import { readdir } from "node:fs/promises";
import { basename, join } from "node:path";
import { type ConversationLog, type ConversationSource, JsonlSummaries, jsonlFiles } from "../conversations.js";
import { stringField } from "../record-fields.js";
import { qwenSessionMapper } from "./qwen-history.js";
import { qwenChatsFolder, qwenHome } from "./qwen-home.js";

/**
 * Qwen Code's past conversations: its session logs under `projects/<cwd>/chats/`, one per session
 * (`<session id>.jsonl`), resumed with `qwen --resume <id>`.
 */
export class QwenConversations implements ConversationSource {
  readonly program = "qwen";
  private readonly summaries = new JsonlSummaries(qwenSessionMapper, {
    id: (_record, path) => basename(path, ".jsonl"),
    cwd: (record) => stringField(record, "cwd"),
  });

  resumeArgs(id: string): string[] {
    return ["--resume", id];
  }

  async logs(env: Readonly<Record<string, string | undefined>>, cwd: string | undefined): Promise<ConversationLog[]> {
    const home = qwenHome(env);
    if (cwd !== undefined) return jsonlFiles(qwenChatsFolder(home, cwd));
    const projects = join(home, "projects");
    const dirs = await readdir(projects).catch(() => [] as string[]);
    return (await Promise.all(dirs.map((d) => jsonlFiles(join(projects, d, "chats"))))).flat();
  }

  summarize(log: ConversationLog) {
    return this.summaries.summarize(log);
  }
}
