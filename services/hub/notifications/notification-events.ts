import { createHash } from "node:crypto";
import { PromptKind, type Session, SessionStatus, StatusReason } from "../../../gen/staragent/v1/session_pb.js";
import type { KindName } from "./notification-store.js";

/** Longest command, path or question quoted in a summary line; longer ones end in `…`. */
export const MAX_SUMMARY_SUBJECT = 120;
/** Longest summary line sent anywhere: push payloads and chat messages carry this one line only. */
export const MAX_SUMMARY = 200;

/** One notification: what it is about and the one line it says. */
export interface NotificationEvent {
  readonly kind: KindName | "test";
  /** `nodes/{node}/sessions/{session}`; empty for a test. */
  readonly session: string;
  readonly node: string;
  /** The tmux session name. */
  readonly sessionName: string;
  /** What identifies this prompt or completed turn of the session: the dedup key. */
  readonly key: string;
  /** "fix-bug on w1". */
  readonly title: string;
  /** The one summary line: what the prompt asks and about what, or the finished turn's first line. */
  readonly summary: string;
  /** The dashboard path that opens the session. */
  readonly path: string;
  /**
   * False for a prompt known so far only from the CLI's own state (e.g. Claude Code's "waiting for
   * permission prompt") and not yet read from the screen, whose summary cannot say what it asks.
   */
  readonly detailed?: boolean;
}

/**
 * The notification a session's state calls for, or undefined when it calls for none: a session in
 * review for an input prompt (keyed by the prompt's fingerprint) or for a finished turn nobody has
 * seen (keyed by its completion id). A node's last known state (`node_unreachable`) is never news.
 */
export function notificationOf(s: Session): NotificationEvent | undefined {
  if (s.nodeUnreachable || s.status !== SessionStatus.REVIEW) return undefined;
  const base = {
    session: s.name,
    node: s.node,
    sessionName: s.tmuxSession,
    title: `${s.tmuxSession} on ${s.node}`,
    path: `/sessions/${encodeURIComponent(s.node)}/${encodeURIComponent(s.tmuxSession)}`,
  };
  if (s.statusReason === StatusReason.INPUT_PROMPT) {
    const fingerprint = s.pendingPrompt?.fingerprint || digest(s.prompt);
    return {
      ...base,
      kind: "prompt",
      key: `prompt:${fingerprint}`,
      summary: line(promptWants(s)),
      detailed: s.pendingPrompt !== undefined,
    };
  }
  if (s.statusReason === StatusReason.UNSEEN_COMPLETION && s.completionId !== "") {
    return { ...base, kind: "turn-finished", key: `turn:${s.completionId}`, summary: "finished its turn" };
  }
  return undefined;
}

/** What a session's pending prompt asks, and about what ("wants to run `npm test`"). */
function promptWants(s: Session): string {
  const p = s.pendingPrompt;
  if (p?.command) return `wants to run \`${cut(p.command)}\``;
  if (p?.filePath) return `wants to edit ${cut(p.filePath)}`;
  if (p?.url) return `wants to fetch ${cut(p.url)}`;
  if (p?.kind === PromptKind.PLAN) return "asks you to approve its plan";
  if (p?.kind === PromptKind.TRUST) return "asks whether to trust its folder";
  const question = p?.question || s.prompt;
  return question ? `asks: ${cut(question)}` : "needs your input";
}

/**
 * The first line of a finished turn's reply as a summary ("finished its turn" when it has none):
 * only that one line ever leaves the Hub, never more of what the agent wrote.
 */
export function turnSummary(reply: string | undefined): string {
  const first = reply
    ?.split("\n")
    .map((l) => l.trim())
    .find((l) => l !== "");
  return first ? line(`finished: ${first}`) : "finished its turn";
}

/** One line, no control characters, at most MAX_SUMMARY characters. */
function line(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed
  const flat = text.replace(/[\u0000-\u001f\u007f-\u009f]+/g, " ");
  const single = flat.replace(/ {2,}/g, " ").trim();
  return single.length > MAX_SUMMARY ? `${single.slice(0, MAX_SUMMARY - 1)}…` : single;
}

function cut(text: string): string {
  const flat = text.replace(/\s*\n\s*/g, " ⏎ ");
  return flat.length > MAX_SUMMARY_SUBJECT ? `${flat.slice(0, MAX_SUMMARY_SUBJECT)}…` : flat;
}

function digest(text: string): string {
  return createHash("sha256").update(text).digest("base64url").slice(0, 22);
}
