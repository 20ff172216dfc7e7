import type { Cli } from "../../../gen/staragent/v1/session_pb.js";
import { claudeChatParser } from "../agents/claude/chat-parser.js";
import { codexChatParser } from "../agents/codex/chat-parser.js";
import { opencodeChatParser } from "../agents/opencode/chat-parser.js";
import { shellChatParser } from "../agents/shell/chat-parser.js";
import type { ChatParser } from "./chat-parser.js";
import { plainChatParser } from "./plain-parser.js";

/** The chat parser of each supported CLI; a new CLI adds its parser here. */
export const CHAT_PARSERS: ReadonlyMap<Cli, ChatParser> = new Map(
  [claudeChatParser, codexChatParser, opencodeChatParser, shellChatParser].map((p) => [p.cli, p]),
);

/** The parser for a session's CLI; programs without one get the plain parser (the screen as text). */
export function chatParserFor(cli: Cli): ChatParser {
  return CHAT_PARSERS.get(cli) ?? plainChatParser;
}
