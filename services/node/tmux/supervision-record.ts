/**
 * What the supervisor of a system session (services/node/system/supervisor.ts) records in its pane,
 * read back by `staragent system status` and the Node's Session (its `supervision`).
 */

/**
 * The pane option in which a system session's supervisor records what became of its service
 * (SupervisionRecord as JSON): `staragent system status` and the Node's Session read it from tmux,
 * and it goes with the session.
 */
export const SUPERVISION_OPTION = "@staragent-supervision";

/** What the supervisor records in SUPERVISION_OPTION (as JSON) after each start and exit. */
export interface SupervisionRecord {
  /** The running service's process (undefined while it waits to restart). */
  readonly pid?: number;
  /** When the current run started (ms since the epoch). */
  readonly startedAt?: number;
  /** Restarts so far (the first start is not one). */
  readonly restarts: number;
  /** The last exit's status: the exit code, or 128 + the signal's number. */
  readonly lastExitStatus?: number;
  /** When it last exited (ms since the epoch). */
  readonly lastExitAt?: number;
  /** What it printed last before that exit. */
  readonly lastLines?: readonly string[];
  /** While it waits to restart: when it will start again (ms since the epoch). */
  readonly nextStartAt?: number;
  /** The wait before the current run's start, or the one now being waited (0 before the first exit). */
  readonly backoffMs?: number;
}

/** A SupervisionRecord from the pane option's text; undefined when unset or not one. */
export function parseSupervision(text: string): SupervisionRecord | undefined {
  if (text === "") return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const v = value as Record<string, unknown>;
  const num = (x: unknown) => (typeof x === "number" && Number.isFinite(x) ? x : undefined);
  if (num(v.restarts) === undefined) return undefined;
  return {
    pid: num(v.pid),
    startedAt: num(v.startedAt),
    restarts: num(v.restarts) as number,
    lastExitStatus: num(v.lastExitStatus),
    lastExitAt: num(v.lastExitAt),
    lastLines: Array.isArray(v.lastLines) ? v.lastLines.filter((l): l is string => typeof l === "string") : undefined,
    nextStartAt: num(v.nextStartAt),
    backoffMs: num(v.backoffMs),
  };
}
