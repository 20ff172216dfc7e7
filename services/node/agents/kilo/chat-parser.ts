import { Cli } from "../../../../gen/staragent/v1/session_pb.js";
import type { ChatParser } from "../../chat/chat-parser.js";
import { opencodeChatParser } from "../opencode/chat-parser.js";

/**
 * A status line Kilo CLI draws in the answer's place while it prepares a turn: a braille spinner and
 * a few words (`⠋ Initializing snapshot…`), not the model's words.
 */
const SPINNER_STATUS = /^\s*[\u2801-\u28ff] \S.*…\s*$/;

/**
 * Kilo CLI's session view is opencode's (`┃` prompt panels, indented answers, `$ command` tools,
 * `▣  Code · model · 1.6s` turn footers, the `┃` prompt box closed by `╹▀▀▀`; docs/chat.md), so
 * opencode's parser reads it, under Kilo's `Cli`, without Kilo's spinner status lines.
 */
export const kiloChatParser: ChatParser = {
  cli: Cli.KILO,
  parse: (raw) => opencodeChatParser.parse(raw.filter((line) => !SPINNER_STATUS.test(line))),
};
