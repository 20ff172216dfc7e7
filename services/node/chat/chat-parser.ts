import type { ChatRole, Cli } from "../../../gen/staragent/v1/session_pb.js";

/**
 * One message read off a pane, before GetChat gives it an id. Parsers return these so that they stay
 * pure functions of the screen text (testable from fixtures) and know nothing about ids or cursors.
 */
export interface ParsedMessage {
  readonly role: ChatRole;
  /** The text, with the TUI's drawing (boxes, markers, indentation) removed. */
  readonly text: string;
  /** For tool messages: the tool's name (`Bash`, `Read`, `shell`, ...). */
  readonly toolName?: string;
  /** For tool messages: the command run or the file touched. */
  readonly toolTarget?: string;
}

/**
 * Turns a CLI's tmux transcript into chat messages. Each CLI draws its conversation differently, so
 * each agent module has its own parser (docs/architecture.md, "Adding a CLI"); adding a CLI adds one parser and its fixtures.
 */
export interface ChatParser {
  readonly cli: Cli;
  /**
   * Parses the transcript: the bounded history followed by the visible screen, one entry per line,
   * wrapped lines already joined (`capture-pane -J`), no escape sequences. The last lines are the
   * bottom of the screen, where TUIs draw their input box and footer: those are not messages.
   * Never throws: text it does not recognise is left out or kept as plain text.
   */
  parse(lines: readonly string[]): ParsedMessage[];
}
