import { ChatRole, Cli } from "../../../gen/staragent/v1/session_pb.js";
import type { ChatParser } from "./chat-parser.js";
import { cleanLines, joinText } from "./screen-lines.js";

/**
 * The parser for programs StarAgent has no parser for (`Cli.OTHER`): the transcript as one assistant
 * message, so a chat view still shows what the program printed rather than nothing.
 */
export const plainChatParser: ChatParser = {
  cli: Cli.OTHER,
  parse(raw) {
    const text = joinText(cleanLines(raw));
    return text === "" ? [] : [{ role: ChatRole.ASSISTANT, text }];
  },
};
