import type { FileHandle } from "node:fs/promises";
import { readLinesBackward, readLinesForward } from "../backward-lines.js";
import { type JsonRecord, parseRecord } from "../log-follower.js";

/** How a follower gets a log's newest figures from its newest records alone. */
export interface NewestRecordsReducer<S> {
  initial(): S;
  /** A predicate for one backward walk (a fresh one per walk): true once the records seen, newest first, suffice. */
  enough(): (record: JsonRecord) => boolean;
  apply(state: S, record: JsonRecord): S;
}

/**
 * The state of an open log's newest records, up to `size`: when `grown` is what an earlier read of the
 * same file left (its state and the offset after its last complete line) and the file only grew since,
 * that state with the appended complete lines applied; else a backward walk from the end until
 * `enough`, replayed oldest first, so the cost does not grow with the log.
 */
export async function readNewestRecords<S>(
  file: FileHandle,
  size: number,
  grown: { readonly state: S; readonly end: number } | undefined,
  reducer: NewestRecordsReducer<S>,
): Promise<{ state: S; end: number; bytesRead: number }> {
  if (grown) {
    const growth = await readLinesForward(file, grown.end, size);
    let state = grown.state;
    for (const line of growth.lines) {
      const record = parseRecord(line);
      if (record) state = reducer.apply(state, record);
    }
    return { state, end: growth.end, bytesRead: size - grown.end };
  }
  const newestFirst: JsonRecord[] = [];
  const enough = reducer.enough();
  const walk = await readLinesBackward(file, size, (line) => {
    const record = parseRecord(line);
    if (!record) return false;
    newestFirst.push(record);
    return enough(record);
  });
  let state = reducer.initial();
  for (let i = newestFirst.length - 1; i >= 0; i--) state = reducer.apply(state, newestFirst[i] as JsonRecord);
  return { state, end: walk.end, bytesRead: walk.bytesRead };
}
