import { readdirSync, readFileSync, readlinkSync } from "node:fs";

/** One process as /proc shows it: its id, parent, state letter and argv. */
export interface ProcessEntry {
  readonly pid: number;
  readonly ppid: number;
  readonly state: string;
  readonly argv: readonly string[];
}

/** Every process visible in /proc right now (processes that vanish while read are left out). */
export function listProcesses(): ProcessEntry[] {
  const entries: ProcessEntry[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      // The command name in parentheses may contain spaces: fields after it start at the last ')'.
      const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const argv = readFileSync(`/proc/${name}/cmdline`, "utf8")
        .split("\0")
        .filter((a) => a !== "");
      entries.push({ pid: Number(name), ppid: Number(rest[1]), state: rest[0] ?? "?", argv });
    } catch {
      // gone meanwhile
    }
  }
  return entries;
}

/** The process `rootPid` and all its descendants that are alive (zombies left out). */
export function processTree(rootPid: number): number[] {
  const all = listProcesses().filter((p) => p.state !== "Z");
  const tree = new Set<number>([rootPid]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const p of all) {
      if (!tree.has(p.pid) && tree.has(p.ppid)) {
        tree.add(p.pid);
        grew = true;
      }
    }
  }
  return [...tree].filter((pid) => all.some((p) => p.pid === pid));
}

/** True while `pid` runs (a zombie is not running: it only waits to be reaped). */
export function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

/** The socket inodes a process holds open (`socket:[inode]` links under /proc/<pid>/fd). */
export function socketInodes(pid: number): string[] {
  const inodes: string[] = [];
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return inodes;
  }
  for (const fd of fds) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (match?.[1]) inodes.push(match[1]);
    } catch {
      // closed meanwhile
    }
  }
  return inodes;
}
