import type { Cli } from "../../../gen/staragent/v1/session_pb.js";
import type { ChatHistoryReader } from "../agents/chat-history.js";
import { ClaudeTranscriptHistory } from "../agents/claude/transcript-history.js";
import { CodexRolloutHistory } from "../agents/codex/rollout-history.js";
import { OpencodeSessionHistory } from "../agents/opencode/session-history.js";

/**
 * A fresh set of native-log readers, one per CLI that keeps a log (each keeps what it read, so every
 * chat backend gets its own); a new CLI adds its reader here. CLIs without one (shells, other
 * programs) keep the screen parser alone.
 */
export function createHistoryReaders(): ReadonlyMap<Cli, ChatHistoryReader> {
  const readers: ChatHistoryReader[] = [
    new ClaudeTranscriptHistory(),
    new CodexRolloutHistory(),
    new OpencodeSessionHistory(),
  ];
  return new Map(readers.map((r) => [r.cli, r]));
}
