import { readdir, readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { ChatRole } from "../../../../gen/staragent/v1/session_pb.js";
import {
  type ConversationInfo,
  type ConversationLog,
  type ConversationSource,
  excerpt,
  jsonlFiles,
} from "../conversations.js";
import { chatsFolder, geminiHome } from "./session-finder.js";
import { GeminiSessionLog } from "./session-log.js";

/** Session files only (`session-*.jsonl`), not other JSONL a chats folder may hold. */
const isSession = (name: string) => name.startsWith("session-");
/** How much of a session id Gemini CLI puts in its file name (`session-<time>-<8 hex>.jsonl`). */
const GEMINI_FILE_ID_CHARS = 8;

/**
 * Gemini CLI's past conversations: its session files under `tmp/<project>/chats/`, one per session,
 * resumed with `gemini --resume <session id>`. A summary comes from the same forward read as chat
 * (the prompts as typed, a replay of the history not counted again).
 */
export class GeminiConversations implements ConversationSource {
  readonly program = "gemini";
  private readonly log = new GeminiSessionLog();

  resumeArgs(id: string): string[] {
    return ["--resume", id];
  }

  /** Gemini CLI names a session's file by the first 8 hex digits of its id (docs/status.md). */
  pathKey(id: string): string {
    return id.slice(0, GEMINI_FILE_ID_CHARS);
  }

  async logs(env: Readonly<Record<string, string | undefined>>, cwd: string | undefined): Promise<ConversationLog[]> {
    const home = geminiHome(env);
    if (cwd !== undefined) {
      const folder = await chatsFolder(home, cwd);
      return folder ? jsonlFiles(folder, isSession) : [];
    }
    const tmp = join(home, "tmp");
    const projects = await readdir(tmp).catch(() => [] as string[]);
    return (await Promise.all(projects.map((p) => jsonlFiles(join(tmp, p, "chats"), isSession)))).flat();
  }

  async summarize(log: ConversationLog): Promise<ConversationInfo | undefined> {
    const session = await this.log.read(log.path);
    if (!session || session.sessionId === "") return undefined;
    const prompts = session.items.filter((i) => i.message.role === ChatRole.USER).map((i) => i.message.text);
    const first = prompts[0];
    if (first === undefined) return undefined;
    const cwd = (await readFile(join(dirname(dirname(log.path)), ".project_root"), "utf8").catch(() => "")).trim();
    return {
      id: session.sessionId,
      cwd,
      firstPrompt: excerpt(first),
      lastPrompt: excerpt(prompts.at(-1) ?? first),
      updateTime: new Date(log.mtimeMs),
      turnCount: prompts.length,
      turnCountExact: true,
      logPath: log.path,
    };
  }
}
