import { PromptKind, type Session } from "../../../gen/staragent/v1/session_pb.js";

/** Longest command, path or question quoted in a one-line summary; longer ones end in `…`. */
export const MAX_SUMMARY_SUBJECT = 80;

function cut(text: string): string {
  const line = text.replace(/\s*\n\s*/g, " ⏎ ");
  return line.length > MAX_SUMMARY_SUBJECT ? `${line.slice(0, MAX_SUMMARY_SUBJECT)}…` : line;
}

/**
 * What a session's pending prompt wants, in words for a notification's title after the session's
 * name ("wants to run `npm test`", "wants to edit src/a.ts", "asks: Which database?"), or undefined
 * when it has none that was read.
 */
export function pendingPromptWants(s: Session): string | undefined {
  const p = s.pendingPrompt;
  if (!p) return undefined;
  if (p.command) return `wants to run \`${cut(p.command)}\``;
  if (p.filePath) return `wants to edit ${cut(p.filePath)}`;
  if (p.url) return `wants to fetch ${cut(p.url)}`;
  if (p.kind === PromptKind.PLAN) return "asks you to approve its plan";
  if (p.kind === PromptKind.TRUST) return "asks whether to trust its folder";
  return p.question ? `asks: ${cut(p.question)}` : undefined;
}
