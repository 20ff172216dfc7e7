import type { ProcessInfo } from "../process-table.js";

/** Programs that count as a plain shell (docs/status.md, "Per CLI": shells). */
export const SHELL_NAMES: ReadonlySet<string> = new Set(["bash", "zsh", "fish", "sh", "dash", "ksh", "tcsh"]);

/** The program name of a process: argv[0]'s basename without a login dash, else `comm`. */
export function programName(process: ProcessInfo): string {
  const first = process.argv[0];
  if (!first) return process.comm;
  const base = first.slice(first.lastIndexOf("/") + 1);
  return base.startsWith("-") ? base.slice(1) : base;
}

/** True when the process is a shell. */
export function isShell(process: ProcessInfo): boolean {
  return SHELL_NAMES.has(programName(process)) || SHELL_NAMES.has(process.comm);
}
