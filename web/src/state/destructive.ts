import type { PendingPrompt } from "../../../gen/staragent/v1/session_pb.js";

/** Shell words and forms that delete, overwrite or rewrite history: each asks for a second step. */
const DESTRUCTIVE_COMMANDS: readonly { readonly rule: RegExp; readonly why: string }[] = [
  { rule: /(^|[;&|(\s])(sudo\s+)?rm\s/, why: "it deletes files" },
  { rule: /(^|[;&|(\s])(rmdir|shred|unlink|truncate|mkfs[.\w]*|dd)\s/, why: "it deletes or overwrites data" },
  { rule: /\bfind\b[^\n]*\s-(delete|exec\s+rm)\b/, why: "it deletes files" },
  { rule: /\bgit\s+push\b[^\n]*(\s--force\b|\s-f\b|\s--force-with-lease\b|\s\+\S)/, why: "it force-pushes" },
  {
    rule: /\bgit\s+(reset\s+--hard|clean\s+-\w*f|checkout\s+--\s|restore\s|branch\s+-D|stash\s+(drop|clear))/,
    why: "it discards changes",
  },
  { rule: /\bgit\s+push\b[^\n]*\s(--delete|-d)\b/, why: "it deletes a remote branch" },
  { rule: /(^|[^<>&\d])>(?!>|&)\s*\S/, why: "it overwrites a file" },
  { rule: /\b(chmod|chown)\s+-R\b/, why: "it changes permissions recursively" },
  { rule: /\b(drop\s+(table|database)|truncate\s+table)\b/i, why: "it deletes data" },
];

/** True when `path` (absolute, or relative to `cwd`) leaves the working folder `cwd`. */
export function outsideFolder(path: string, cwd: string): boolean {
  if (cwd === "") return false;
  const parts: string[] = [];
  const joined = path.startsWith("/") ? path : `${cwd.replace(/\/+$/, "")}/${path}`;
  for (const part of joined.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") parts.pop();
    else parts.push(part);
  }
  const base = cwd.replace(/\/+$/, "");
  const resolved = `/${parts.join("/")}`;
  return resolved !== base && !resolved.startsWith(`${base}/`);
}

/**
 * Why allowing this prompt's request needs a deliberate second step, or undefined when it does not:
 * a command that deletes, overwrites or force-pushes, or an edit of a file outside the session's
 * working folder `cwd`. Denying never needs one.
 */
export function destructiveReason(prompt: PendingPrompt, cwd: string): string | undefined {
  if (prompt.command !== "") {
    const hit = DESTRUCTIVE_COMMANDS.find((d) => d.rule.test(prompt.command));
    if (hit) return hit.why;
  }
  if (prompt.filePath !== "" && outsideFolder(prompt.filePath, cwd)) return "it writes outside the working folder";
  if (prompt.truncated && prompt.command === "" && prompt.filePath === "") return "the screen cut what it is about";
  return undefined;
}
