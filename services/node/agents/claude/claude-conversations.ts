import { readdir } from "node:fs/promises";
import { basename, join } from "node:path";
import { type ConversationLog, type ConversationSource, JsonlSummaries, jsonlFiles } from "../conversations.js";
import { stringField } from "../record-fields.js";
import { claudeConfigDir } from "./claude-config.js";
import { TranscriptFinder } from "./transcript-finder.js";
import { claudeTranscriptMapper } from "./transcript-history.js";

/** Subagent transcripts (`agent-*.jsonl`) are not conversations of their own. */
const isSession = (name: string) => !name.startsWith("agent-");

/**
 * Claude Code's past conversations: the session transcripts under `projects/<enc(cwd)>/` of its config
 * folder, one per conversation (`<session id>.jsonl`), resumed with `claude --resume <id>`.
 */
export class ClaudeConversations implements ConversationSource {
  readonly program = "claude";
  private readonly finder = new TranscriptFinder();
  private readonly summaries = new JsonlSummaries(claudeTranscriptMapper, {
    id: (_record, path) => basename(path, ".jsonl"),
    cwd: (record) => stringField(record, "cwd"),
  });

  resumeArgs(id: string): string[] {
    return ["--resume", id];
  }

  async logs(env: Readonly<Record<string, string | undefined>>, cwd: string | undefined): Promise<ConversationLog[]> {
    const configDir = claudeConfigDir(env);
    if (cwd !== undefined) {
      const dir = await this.finder.projectDir(configDir, cwd);
      return dir ? jsonlFiles(dir, isSession) : [];
    }
    const projects = join(configDir, "projects");
    const dirs = await readdir(projects).catch(() => [] as string[]);
    return (await Promise.all(dirs.map((d) => jsonlFiles(join(projects, d), isSession)))).flat();
  }

  summarize(log: ConversationLog) {
    return this.summaries.summarize(log);
  }
}
