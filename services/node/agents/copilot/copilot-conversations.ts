import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { type ConversationLog, type ConversationSource, JsonlSummaries } from "../conversations.js";
import { objectField, stringField } from "../record-fields.js";
import { copilotHome, sessionStateFolder } from "./copilot-home.js";
import { copilotEventsMapper } from "./events-history.js";

/**
 * Copilot CLI's past conversations: one folder per session under `session-state/` of its home, its
 * `events.jsonl` opening with `session.start` (the session id and `context.cwd`), resumed with
 * `copilot --resume=<id>`.
 */
export class CopilotConversations implements ConversationSource {
  readonly program = "copilot";
  private readonly summaries = new JsonlSummaries(copilotEventsMapper, {
    id: (record) => (record?.type === "session.start" ? stringField(objectField(record, "data"), "sessionId") : ""),
    cwd: (record) =>
      record.type === "session.start" ? stringField(objectField(objectField(record, "data"), "context"), "cwd") : "",
  });

  resumeArgs(id: string): string[] {
    return [`--resume=${id}`];
  }

  /** Every session's log (the folder is in each one's head: the caller filters by it). */
  async logs(env: Readonly<Record<string, string | undefined>>): Promise<ConversationLog[]> {
    const root = sessionStateFolder(copilotHome(env));
    const ids = await readdir(root).catch(() => [] as string[]);
    const logs = await Promise.all(
      ids.map(async (id) => {
        const path = join(root, id, "events.jsonl");
        const info = await stat(path).catch(() => undefined);
        return info?.isFile() ? { path, mtimeMs: info.mtimeMs, size: info.size } : undefined;
      }),
    );
    return logs.filter((l) => l !== undefined).sort((a, b) => b.mtimeMs - a.mtimeMs);
  }

  summarize(log: ConversationLog) {
    return this.summaries.summarize(log);
  }
}
