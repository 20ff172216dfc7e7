import type { ProcessInfo } from "./process-table.js";

/** Interpreters a CLI may run under, so the script (argv[1]) names the program. */
const INTERPRETERS: ReadonlySet<string> = new Set(["node", "nodejs", "bun", "deno"]);

function basename(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

/**
 * The names a process goes by, for recognising CLIs: argv[0]'s basename, the kernel's `comm`, and,
 * under an interpreter (`node …/codex.js`), the script's basename and full path.
 */
export function programNames(process: ProcessInfo): { names: ReadonlySet<string>; script: string } {
  const names = new Set<string>([process.comm]);
  const first = process.argv[0];
  if (first === undefined) return { names, script: "" };
  const program = basename(first);
  names.add(program);
  if (INTERPRETERS.has(program) || INTERPRETERS.has(process.comm)) {
    const script = process.argv.slice(1).find((a) => !a.startsWith("-")) ?? "";
    if (script !== "") names.add(basename(script));
    return { names, script };
  }
  return { names, script: "" };
}

/**
 * The value of an option in an argv (`--name value` or `--name=value`), for CLIs started on a named
 * session (`--session <id>`); "" when absent.
 */
export function optionValue(argv: readonly string[], names: readonly string[]): string {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    for (const name of names) {
      if (arg === name) return argv[i + 1] ?? "";
      if (name.startsWith("--") && arg.startsWith(`${name}=`)) return arg.slice(name.length + 1);
    }
  }
  return "";
}
