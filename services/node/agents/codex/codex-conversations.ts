import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { type ConversationLog, type ConversationSource, JsonlSummaries, jsonlFiles } from "../conversations.js";
import { objectField, stringField } from "../record-fields.js";
import { codexHome } from "./codex-home.js";
import { codexRolloutMapper } from "./rollout-history.js";

/** The thread id at the end of a rollout's name: `rollout-<local time>-<uuid>.jsonl`. */
const ROLLOUT_ID = /([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$/;

/** Entries of a folder that are themselves folders of digits (`2026`, `11`, `30`). */
async function dated(dir: string): Promise<string[]> {
  const names = await readdir(dir).catch(() => [] as string[]);
  return names.filter((n) => /^\d+$/.test(n)).map((n) => join(dir, n));
}

/**
 * Codex's past conversations: its rollouts under `sessions/YYYY/MM/DD/` of its home, one per thread
 * (the folder and id in the first record, `session_meta`), resumed with `codex resume <id>`.
 */
export class CodexConversations implements ConversationSource {
  readonly program = "codex";
  private readonly summaries = new JsonlSummaries(codexRolloutMapper, {
    id: (record, path) => {
      const meta = record?.type === "session_meta" ? stringField(objectField(record, "payload"), "id") : "";
      return meta || (ROLLOUT_ID.exec(path)?.[1] ?? "");
    },
    cwd: (record) => (record.type === "session_meta" ? stringField(objectField(record, "payload"), "cwd") : ""),
  });

  resumeArgs(id: string): string[] {
    return ["resume", id];
  }

  /** Every rollout (the folder is in each one's head, not its path: the caller filters by it). */
  async logs(env: Readonly<Record<string, string | undefined>>): Promise<ConversationLog[]> {
    const sessions = join(codexHome(env), "sessions");
    const days = (await Promise.all((await dated(sessions)).map(dated))).flat();
    const folders = (await Promise.all(days.map(dated))).flat();
    const keep = (name: string) => name.startsWith("rollout-");
    return (await Promise.all(folders.map((f) => jsonlFiles(f, keep)))).flat();
  }

  summarize(log: ConversationLog) {
    return this.summaries.summarize(log);
  }
}
