import { basename } from "node:path";
import { Cli } from "../../../../gen/staragent/v1/session_pb.js";
import {
  type ChatHistoryReader,
  type ChatLogRef,
  type HistoryRequest,
  type HistoryWindow,
  MAX_HISTORY_MESSAGES,
} from "../chat-history.js";
import { window } from "../history-span.js";
import type { GeminiSessionLog } from "./session-log.js";

/**
 * Gemini CLI's session file as chat history: the typed prompts, the replies, each tool call with its
 * result, and `Request cancelled.` notices, from the same forward read the status uses (records
 * written again and replays of the history after a cancelled tool are what came before, not new
 * messages). Pages are cut from that read, so they cost no file access beyond a `stat`.
 */
export class GeminiHistory implements ChatHistoryReader {
  readonly cli = Cli.GEMINI;

  constructor(private readonly log: GeminiSessionLog) {}

  async read(log: ChatLogRef, request: HistoryRequest): Promise<HistoryWindow | undefined> {
    const session = await this.log.read(log.path);
    if (!session) return undefined;
    const limit = Math.max(1, Math.min(request.limit, MAX_HISTORY_MESSAGES));
    return {
      ...window(session.items, 0, limit, request),
      logKey: `${log.path}\0${session.sessionId}`,
      label: `gemini session ${basename(log.path)}`,
    };
  }

  /** Forgets what was read (benchmarks measure cold reads with it). */
  clear(): void {
    this.log.clear();
  }
}
