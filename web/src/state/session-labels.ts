import { Connectivity } from "../../../gen/staragent/v1/node_service_pb.js";
import {
  PromptKind,
  type Session,
  SessionOrigin,
  SessionStatus,
  SessionType,
  StatusReason,
} from "../../../gen/staragent/v1/session_pb.js";

/** How a status is shown: never by colour alone, always with a glyph and a word. */
export interface StatusLook {
  /** Short word shown next to the glyph. */
  readonly word: string;
  /** A glyph that tells the statuses apart without colour. */
  readonly glyph: string;
  /** CSS class suffix that picks the colour. */
  readonly tone: "working" | "review" | "idle" | "unknown";
}

const STATUS_LOOKS: Record<SessionStatus, StatusLook> = {
  [SessionStatus.WORKING]: { word: "working", glyph: "◐", tone: "working" },
  [SessionStatus.REVIEW]: { word: "review", glyph: "◆", tone: "review" },
  [SessionStatus.IDLE]: { word: "idle", glyph: "○", tone: "idle" },
  [SessionStatus.UNSPECIFIED]: { word: "unknown", glyph: "?", tone: "unknown" },
};

/** The glyph, word and colour of a status. */
export function statusLook(status: SessionStatus): StatusLook {
  return STATUS_LOOKS[status] ?? STATUS_LOOKS[SessionStatus.UNSPECIFIED];
}

export { cliName } from "./cli-table.js";

const PROMPT_PREFIX: Record<PromptKind, string> = {
  [PromptKind.UNSPECIFIED]: "Asks",
  [PromptKind.APPROVAL]: "Asks for approval",
  [PromptKind.QUESTION]: "Asks a question",
  [PromptKind.TRUST]: "Asks to trust the folder",
  [PromptKind.PLAN]: "Asks to approve a plan",
};

/**
 * The row's why in two parts: `lead` names the state ("Turn finished: "), `rest` is what the agent
 * said (the reply's last line). The compact row shows `rest` alone where there is one, since its
 * status word already says the state and a phone row has room for little more.
 */
export function reasonParts(s: Session): { readonly lead: string; readonly rest: string } {
  const text = reasonText(s);
  const excerpt =
    s.replyExcerpt !== "" &&
    (s.statusReason === StatusReason.UNSEEN_COMPLETION || s.statusReason === StatusReason.SEEN_COMPLETION);
  if (!excerpt || !text.endsWith(s.replyExcerpt)) return { lead: text, rest: "" };
  return { lead: text.slice(0, text.length - s.replyExcerpt.length), rest: s.replyExcerpt };
}

/**
 * Why the session has its status, in words: for a review, what is pending (the prompt's text, or that a
 * turn finished). The text comes from the agent's screen and is shown as text, never as HTML.
 */
export function reasonText(s: Session): string {
  switch (s.statusReason) {
    case StatusReason.INPUT_PROMPT: {
      const prefix = PROMPT_PREFIX[s.promptKind] ?? "Asks";
      return s.prompt ? `${prefix}: ${s.prompt}` : `${prefix} (waiting for input)`;
    }
    case StatusReason.UNSEEN_COMPLETION:
      // The reply's last line (reply_excerpt), so the row and the notification say how it ended.
      return s.replyExcerpt ? `Turn finished: ${s.replyExcerpt}` : "Turn finished";
    case StatusReason.ACTIVE_TURN:
      return "Working on a turn";
    case StatusReason.COMMAND_RUNNING:
      return "Running a command";
    case StatusReason.NO_TURN:
      // No turn in this run; a resumed conversation's log has the replies of the runs before it.
      return (s.usage?.totalOutputTokens ?? 0n) > 0n
        ? "No new turn since it started (earlier turns are in Chat)"
        : "No turn yet";
    case StatusReason.SEEN_COMPLETION:
      return s.replyExcerpt ? `Turn finished, seen: ${s.replyExcerpt}` : "Turn finished, seen";
    case StatusReason.INTERRUPTED:
      return "Interrupted";
    case StatusReason.SHELL_PROMPT:
      return "At the prompt";
    case StatusReason.PROCESS_EXITED:
      return "The program has exited";
    case StatusReason.NOT_TRACKED:
      return s.type === SessionType.SYSTEM ? "StarAgent service" : "Status not tracked";
    default:
      return "";
  }
}

/** Whether the dashboard offers Stop, and whether stopping needs the extra deliberate step. */
export function stopPolicy(s: Session): "never" | "confirm" | "force" {
  if (s.type === SessionType.SYSTEM || s.origin === SessionOrigin.SYSTEM) return "never";
  return s.origin === SessionOrigin.CREATED ? "confirm" : "force";
}

/** Words for each known origin (every value but UNSPECIFIED, so a new one makes tsc name this table). */
const ORIGIN_WORDS: Record<Exclude<SessionOrigin, SessionOrigin.UNSPECIFIED>, string> = {
  [SessionOrigin.CREATED]: "created",
  [SessionOrigin.ADOPTED]: "adopted",
  [SessionOrigin.SYSTEM]: "system",
  [SessionOrigin.UNMANAGED]: "not managed",
};

/** Words for how the session came under StarAgent ("" for a value this page does not know). */
export function originText(origin: SessionOrigin): string {
  const words: Partial<Record<SessionOrigin, string>> = ORIGIN_WORDS;
  return words[origin] ?? "";
}

/** How a node's connectivity is shown: glyph, word and tone, like statuses. */
export function connectivityLook(c: Connectivity): { glyph: string; word: string; tone: string } {
  switch (c) {
    case Connectivity.ONLINE:
      return { glyph: "●", word: "online", tone: "online" };
    case Connectivity.CONNECTING:
      return { glyph: "◌", word: "connecting", tone: "connecting" };
    case Connectivity.OFFLINE:
      return { glyph: "✕", word: "unreachable", tone: "offline" };
    default:
      return { glyph: "?", word: "unknown", tone: "connecting" };
  }
}

/** "3 min ago"-style wording for a time, coarse on purpose (the list redraws it twice a minute). */
export function relativeTime(date: Date | undefined, now = Date.now()): string {
  if (!date) return "";
  const s = Math.round((now - date.getTime()) / 1000);
  if (s < 45) return "just now";
  const m = Math.round(s / 60);
  if (m < 60) return `${m} min ago`;
  const h = Math.round(m / 60);
  if (h < 24) return `${h} h ago`;
  const d = Math.round(h / 24);
  return d === 1 ? "yesterday" : `${d} days ago`;
}
