import { readFileSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";

/**
 * Everything StarAgent reads from `/proc`: processes, the trees below panes, environments and start
 * times. The status engine's caches (`status/pane-processes.ts`) sit on top of it.
 */

/** Clock ticks per second for `/proc/<pid>/stat` start times (USER_HZ, 100 on Linux). */
const CLOCK_TICKS_PER_SECOND = 100;

/** One process, from `/proc/<pid>/stat` and `/proc/<pid>/cmdline`. */
export interface ProcessInfo {
  readonly pid: number;
  readonly ppid: number;
  /** The kernel's short name (`comm`, at most 15 characters). */
  readonly comm: string;
  /** The argv; empty for kernel threads and processes that vanished while read. */
  readonly argv: readonly string[];
  /** Start time in clock ticks since boot (`/proc/<pid>/stat` field 22). */
  readonly startTicks: number;
}

/** A snapshot of the machine's processes, indexed for walking trees below a pane's pid. */
export interface ProcessTable {
  readonly byPid: ReadonlyMap<number, ProcessInfo>;
  readonly children: ReadonlyMap<number, readonly number[]>;
}

/** Reads every process once (a few ms for a few hundred processes); vanished processes are skipped. */
export async function readProcessTable(proc = "/proc"): Promise<ProcessTable> {
  const byPid = new Map<number, ProcessInfo>();
  const children = new Map<number, number[]>();
  const entries = await readdir(proc);
  await Promise.all(
    entries
      .filter((e) => /^\d+$/.test(e))
      .map(async (e) => {
        const info = await readProcess(Number(e), proc);
        if (info) byPid.set(info.pid, info);
      }),
  );
  for (const info of byPid.values()) {
    const list = children.get(info.ppid);
    if (list) list.push(info.pid);
    else children.set(info.ppid, [info.pid]);
  }
  return { byPid, children };
}

/** Reads one process; undefined when it is gone or unreadable. */
export async function readProcess(pid: number, proc = "/proc"): Promise<ProcessInfo | undefined> {
  try {
    const [stat, cmdline] = await Promise.all([
      readFile(`${proc}/${pid}/stat`, "utf8"),
      readFile(`${proc}/${pid}/cmdline`).catch(() => Buffer.alloc(0)),
    ]);
    return parseStat(pid, stat, cmdline);
  } catch {
    return undefined;
  }
}

/** Parses `/proc/<pid>/stat` (whose `comm` may contain spaces and parentheses) and the NUL-split argv. */
export function parseStat(pid: number, stat: string, cmdline: Buffer): ProcessInfo | undefined {
  const open = stat.indexOf("(");
  const close = stat.lastIndexOf(")");
  if (open < 0 || close < open) return undefined;
  const rest = stat.slice(close + 2).split(" ");
  // rest[0] is field 3 (state); ppid is field 4, starttime field 22.
  const ppid = Number(rest[1]);
  const startTicks = Number(rest[19]);
  // The kernel writes whole numbers there; anything else is not a stat line.
  if (!Number.isSafeInteger(ppid) || !Number.isSafeInteger(startTicks)) return undefined;
  const argv = cmdline.length > 0 ? cmdline.toString("utf8").replace(/\0+$/, "").split("\0") : [];
  return { pid, ppid, comm: stat.slice(open + 1, close), argv, startTicks };
}

/** The processes below (and including) `rootPid`, parents before children. */
export function descendants(table: ProcessTable, rootPid: number): ProcessInfo[] {
  const out: ProcessInfo[] = [];
  const queue = [rootPid];
  const seen = new Set<number>();
  while (queue.length > 0) {
    const pid = queue.shift() as number;
    if (seen.has(pid)) continue;
    seen.add(pid);
    const info = table.byPid.get(pid);
    if (info) out.push(info);
    for (const child of table.children.get(pid) ?? []) queue.push(child);
  }
  return out;
}

/**
 * Reads only the processes below (and including) `rootPid` through `/proc/<pid>/task/<tid>/children`:
 * a few files for a pane instead of every process on the machine. Undefined when the kernel does not
 * offer `children` files (the caller then reads the whole table).
 */
export async function readProcessTree(rootPid: number, proc = "/proc"): Promise<ProcessInfo[] | undefined> {
  const out: ProcessInfo[] = [];
  const queue = [rootPid];
  const seen = new Set<number>();
  while (queue.length > 0) {
    const pid = queue.shift() as number;
    if (seen.has(pid)) continue;
    seen.add(pid);
    const info = await readProcess(pid, proc);
    if (!info) continue;
    out.push(info);
    let tasks: string[];
    try {
      tasks = await readdir(`${proc}/${pid}/task`);
    } catch {
      continue;
    }
    const lists = await Promise.all(
      tasks.map((tid) =>
        readFile(`${proc}/${pid}/task/${tid}/children`, "utf8").catch((err: NodeJS.ErrnoException) => err),
      ),
    );
    for (const list of lists) {
      if (list instanceof Error) {
        if (list.code === "ENOENT" && pid === rootPid && tasks.length > 0) return undefined;
        continue;
      }
      for (const child of list.split(" ")) if (child !== "" && child !== "\n") queue.push(Number(child));
    }
  }
  return out;
}

/**
 * True when the process still runs (same pid, same start time: not a reused pid). Asked for every
 * agent pane at every look, so it reads only `stat`, and synchronously: a `/proc` file is made in
 * memory by the kernel and never waits on a disk, and one read costs microseconds where the promise
 * API's open, stat, read and close through the thread pool cost far more of the loop's time.
 */
export function stillRunning(process: ProcessInfo, proc = "/proc"): boolean {
  let stat: string;
  try {
    stat = readFileSync(`${proc}/${process.pid}/stat`, "utf8");
  } catch {
    return false;
  }
  return parseStat(process.pid, stat, Buffer.alloc(0))?.startTicks === process.startTicks;
}

/** Reads `/proc/<pid>/environ`; undefined when not readable (another user's process, gone). */
export async function readEnviron(pid: number, proc = "/proc"): Promise<Record<string, string> | undefined> {
  try {
    const raw = await readFile(`${proc}/${pid}/environ`);
    const env: Record<string, string> = {};
    for (const entry of raw.toString("utf8").split("\0")) {
      const eq = entry.indexOf("=");
      if (eq > 0) env[entry.slice(0, eq)] = entry.slice(eq + 1);
    }
    return env;
  } catch {
    return undefined;
  }
}

/** When the machine booted, in ms since the epoch, from `/proc/uptime` (0 s uptime when unreadable). */
export function bootTimeMs(proc = "/proc"): number {
  let uptime = 0;
  try {
    // /proc/uptime has sub-second resolution; read once per caller, it anchors every start time.
    uptime = Number(readFileSync(`${proc}/uptime`, "utf8").split(" ")[0]) || 0;
  } catch {
    uptime = 0;
  }
  return Date.now() - uptime * 1000;
}

/** When a process started, from its start time in clock ticks since boot (`bootMs`: `bootTimeMs()`). */
export function processStartTime(process: ProcessInfo, bootMs: number): Date {
  return new Date(bootMs + (process.startTicks / CLOCK_TICKS_PER_SECOND) * 1000);
}
