import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { parseRecord } from "../log-follower.js";
import { stringField } from "../record-fields.js";

/** Largest sessions file read: the real ones are a few hundred bytes; anything bigger is not one. */
const MAX_SESSIONS_FILE_BYTES = 64 * 1024;

/** What Claude Code 2.1.x says about a running process in `sessions/<pid>.json` (docs/status.md, "Per CLI"). */
export interface ClaudeLiveState {
  readonly sessionId: string;
  /** The start cwd (the transcript folder is derived from it). */
  readonly cwd: string;
  readonly status: "idle" | "busy" | "waiting" | "";
  /** What it waits for when `status` is `waiting` (e.g. `permission prompt`). */
  readonly waitingFor: string;
  /** When `status` last changed (ms since the epoch; 0 when the file does not say). */
  readonly statusSince: number;
}

/** The path of the live state file of Claude Code process `pid`. */
export function sessionsFilePath(configDir: string, pid: number): string {
  return join(configDir, "sessions", `${pid}.json`);
}

/**
 * Reads `sessions/<pid>.json`. Undefined when absent (older versions, or the CLI exited), unreadable,
 * or caught mid-rewrite (the CLI rewrites it in place; the next poll reads it whole).
 */
export async function readLiveState(configDir: string, pid: number): Promise<ClaudeLiveState | undefined> {
  let raw: Buffer;
  try {
    raw = await readFile(sessionsFilePath(configDir, pid));
  } catch {
    return undefined;
  }
  if (raw.length > MAX_SESSIONS_FILE_BYTES) return undefined;
  const record = parseRecord(raw);
  if (!record || record.pid !== pid) return undefined;
  const sessionId = stringField(record, "sessionId");
  if (!/^[A-Za-z0-9_-]{1,128}$/.test(sessionId)) return undefined;
  const status = stringField(record, "status");
  return {
    sessionId,
    cwd: stringField(record, "cwd"),
    status: status === "idle" || status === "busy" || status === "waiting" ? status : "",
    waitingFor: stringField(record, "waitingFor"),
    statusSince: numberField(record, "statusUpdatedAt") || numberField(record, "updatedAt"),
  };
}

function numberField(record: Readonly<Record<string, unknown>>, key: string): number {
  const value = record[key];
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}
