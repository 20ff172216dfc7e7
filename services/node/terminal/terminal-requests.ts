import { Code, ConnectError } from "@connectrpc/connect";
import { DEFAULT_HISTORY_LINES, MAX_HISTORY_LINES } from "../../common/history-lines.js";
import { MAX_INPUT_BYTES, MAX_TERMINAL_DIMENSION } from "./limits.js";
import type { CellSize } from "./terminal-tmux.js";

/**
 * Checks a requested terminal size (`cols`, `rows` of AttachRequest or ResizeTerminalRequest):
 * INVALID_ARGUMENT naming the field unless both are 1 to MAX_TERMINAL_DIMENSION.
 */
export function validateSize(cols: number, rows: number, prefix = ""): CellSize {
  for (const [field, value] of [
    ["cols", cols],
    ["rows", rows],
  ] as const) {
    if (!Number.isInteger(value) || value < 1 || value > MAX_TERMINAL_DIMENSION) {
      throw new ConnectError(
        `${prefix}${field}: ${value} is not a terminal size (1 to ${MAX_TERMINAL_DIMENSION} cells)`,
        Code.InvalidArgument,
      );
    }
  }
  return { cols, rows };
}

/** The history lines to send for AttachRequest.history_lines (0 means the default). */
export function validateHistoryLines(value: number): number {
  if (!Number.isInteger(value) || value < 0 || value > MAX_HISTORY_LINES) {
    throw new ConnectError(
      `history_lines: ${value} is out of range (0 to ${MAX_HISTORY_LINES}; 0 means ${DEFAULT_HISTORY_LINES})`,
      Code.InvalidArgument,
    );
  }
  return value === 0 ? DEFAULT_HISTORY_LINES : value;
}

/** Checks SendInputRequest's `sequence` and `data`: INVALID_ARGUMENT with the rule broken. */
export function validateInput(sequence: number, data: Uint8Array, prefix = ""): void {
  if (sequence < 1) {
    throw new ConnectError(`${prefix}sequence: must be 1 or more (1 for the first input)`, Code.InvalidArgument);
  }
  if (data.byteLength === 0 || data.byteLength > MAX_INPUT_BYTES) {
    throw new ConnectError(
      `${prefix}data: ${data.byteLength} bytes; send 1 to ${MAX_INPUT_BYTES} bytes per call (split larger input)`,
      Code.InvalidArgument,
    );
  }
}

/** Checks an attachment id's shape before looking it up. */
export function validateAttachmentId(id: string, prefix = ""): void {
  if (id === "" || id.length > 200) {
    throw new ConnectError(
      `${prefix}attachment_id: missing or malformed; use the id from 'attached'`,
      Code.InvalidArgument,
    );
  }
}
