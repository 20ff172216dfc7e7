import type { Cli } from "../../../gen/staragent/v1/session_pb.js";
import { createBuiltInAgents } from "../agents/registry.js";
import type { ChatParser } from "./chat-parser.js";
import { plainChatParser } from "./plain-parser.js";

/**
 * The chat parser of each built-in CLI, from the agent registry (parsers are pure, so one table
 * serves every reader of fixtures and captures; a machine asks its own registry).
 */
export const CHAT_PARSERS: ReadonlyMap<Cli, ChatParser> = new Map(
  createBuiltInAgents().modules.map((m) => [m.cli, m.chatParser]),
);

/** The parser for a session's CLI; programs without one get the plain parser (the screen as text). */
export function chatParserFor(cli: Cli): ChatParser {
  return CHAT_PARSERS.get(cli) ?? plainChatParser;
}
