import type { FileHandle } from "node:fs/promises";

/**
 * Bytes read per step when walking a log backward: large enough that a typical turn-end record and
 * its neighbours arrive in one read, small enough that a read stays well under a millisecond.
 */
export const BACKWARD_BLOCK_BYTES = 64 * 1024;

/**
 * Most bytes a backward walk reads before giving up: it bounds the cost of a log whose newest turn
 * is enormous (or that holds no lifecycle record at all), whatever the log's size.
 */
export const MAX_BACKWARD_BYTES = 32 * 1024 * 1024;

const NEWLINE = 0x0a;

/** How a backward walk ended. */
export interface BackwardResult {
  /** Byte offset just after the newest complete line (where a forward follower resumes). */
  readonly end: number;
  /** True when `visit` asked to stop; false when the file's start or MAX_BACKWARD_BYTES came first. */
  readonly stopped: boolean;
  /** Bytes read from the file. */
  readonly bytesRead: number;
}

/**
 * Walks the complete lines of an open file from the end toward the start in fixed-size blocks,
 * calling `visit` with each line (newest first, without its newline) and the byte offset where it
 * starts, until it returns true. A last line without its newline (the writer is mid-write) is not a
 * line yet and is skipped, never an error. The cost depends on how far back the wanted record is,
 * not on the file's size.
 */
export async function readLinesBackward(
  file: FileHandle,
  size: number,
  visit: (line: Buffer, offset: number) => boolean,
  options: { blockBytes?: number; maxBytes?: number } = {},
): Promise<BackwardResult> {
  const blockBytes = options.blockBytes ?? BACKWARD_BLOCK_BYTES;
  const maxBytes = options.maxBytes ?? MAX_BACKWARD_BYTES;
  let position = size;
  let carry: Buffer = Buffer.alloc(0);
  let end = -1;
  let bytesRead = 0;
  while (position > 0 && bytesRead < maxBytes) {
    const length = Math.min(blockBytes, position);
    position -= length;
    const block = Buffer.allocUnsafe(length);
    const { bytesRead: n } = await file.read(block, 0, length, position);
    bytesRead += n;
    const chunk = n === length ? block : block.subarray(0, n);
    let data = carry.length > 0 ? Buffer.concat([chunk, carry]) : chunk;
    let cut = data.length;
    // The bytes after the newest newline are a partial line: skip them once, on the first newline seen.
    if (end < 0) {
      const nl = data.lastIndexOf(NEWLINE);
      if (nl < 0) {
        carry = data;
        continue;
      }
      end = position + nl + 1;
      data = data.subarray(0, nl);
      cut = data.length;
    }
    while (cut > 0) {
      const nl = data.lastIndexOf(NEWLINE, cut - 1);
      if (nl < 0) break;
      const line = data.subarray(nl + 1, cut);
      cut = nl;
      if (line.length > 0 && visit(line, position + nl + 1)) return { end, stopped: true, bytesRead };
    }
    carry = Buffer.from(data.subarray(0, cut));
  }
  // The first line of the file has no newline before it.
  if (position === 0 && end >= 0 && carry.length > 0 && visit(carry, 0)) return { end, stopped: true, bytesRead };
  return { end: Math.max(end, 0), stopped: false, bytesRead };
}

/**
 * Reads the complete lines in `[from, to)` of an open file, oldest first; returns them (with the
 * byte offset where each starts) and the offset after the last complete line (a trailing partial
 * line is left for the next read).
 */
export async function readLinesForward(
  file: FileHandle,
  from: number,
  to: number,
): Promise<{ lines: Buffer[]; offsets: number[]; end: number }> {
  const length = to - from;
  if (length <= 0) return { lines: [], offsets: [], end: from };
  const buffer = Buffer.allocUnsafe(length);
  const { bytesRead } = await file.read(buffer, 0, length, from);
  const data = buffer.subarray(0, bytesRead);
  const lines: Buffer[] = [];
  const offsets: number[] = [];
  let start = 0;
  for (let nl = data.indexOf(NEWLINE, 0); nl >= 0; nl = data.indexOf(NEWLINE, start)) {
    if (nl > start) {
      lines.push(data.subarray(start, nl));
      offsets.push(from + start);
    }
    start = nl + 1;
  }
  return { lines, offsets, end: from + start };
}
