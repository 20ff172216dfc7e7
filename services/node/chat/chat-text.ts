import { Code, ConnectError } from "@connectrpc/connect";

/** Largest chat message, in UTF-8 bytes (the contract's limit; a paste this size still arrives whole). */
export const MAX_CHAT_TEXT_BYTES = 16_384;

/**
 * Checks a chat message and returns it as it will be typed: line endings made `\n`. INVALID_ARGUMENT
 * naming `text` when it is empty (or only white space), over MAX_CHAT_TEXT_BYTES, or holds control
 * characters other than tab and line breaks: an escape sequence could end the bracketed paste early
 * and be read by the CLI as keys.
 */
export function validateChatText(text: string): string {
  const bytes = Buffer.byteLength(text, "utf8");
  if (text.trim() === "") {
    throw new ConnectError("text: the message is empty; send 1 to 16384 bytes of text", Code.InvalidArgument);
  }
  if (bytes > MAX_CHAT_TEXT_BYTES) {
    throw new ConnectError(
      `text: the message is ${bytes} bytes; at most ${MAX_CHAT_TEXT_BYTES} bytes are allowed`,
      Code.InvalidArgument,
    );
  }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
  if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/.test(text)) {
    throw new ConnectError(
      "text: contains control characters (only tab and line breaks are allowed)",
      Code.InvalidArgument,
    );
  }
  return text.replace(/\r\n?/g, "\n");
}
