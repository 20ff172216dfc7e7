import { ChatRole } from "../../../gen/staragent/v1/session_pb.js";
import type { ParsedMessage } from "./chat-parser.js";

/**
 * Characters of a message's normalized text compared with the other side: enough to tell messages
 * apart, few enough that a screen's wrapping, markdown rendering or cut-off end does not matter.
 */
const COMPARE_CHARS = 48;
/**
 * Shorter normalized texts must start the other text (a streamed answer's first word); longer ones
 * may lie anywhere in it (a long answer whose start scrolled off the screen).
 */
const MIN_CONTAINED_CHARS = 12;
/**
 * Tool names of screen lines that summarise calls rather than name one (Claude Code's collapsed
 * "Ran 1 shell command", Codex's "Explored"): they stand for whatever calls the log has there.
 */
const SUMMARY_TOOL_NAMES: ReadonlySet<string> = new Set(["", "explore"]);
/**
 * A Markdown code fence line (```` ```ts ````, `~~~`): TUIs draw the block without it, so its language
 * word must not count as text.
 */
const FENCE_LINE = /^[ \t]*(?:`{3,}|~{3,})[^\n`]*$/gm;

/** What lining up the screen with the log found. */
export interface LiveTail {
  /** Screen messages after the last one the log also holds: what the log has not recorded yet. */
  readonly tail: readonly ParsedMessage[];
  /** How many screen messages were found in the log. */
  readonly matched: number;
}

/**
 * The part of the screen a chat built from the native log still needs: the live tail. The screen
 * shows the newest stretch of the conversation, drawn (wrapped, rendered, summarised) differently
 * from how the log stores it; its messages are lined up with the newest log messages in order
 * (a longest common subsequence under `sameMessage`, preferring the newest log messages). Everything
 * up to the last screen message found in the log is the log's (it is the authority for what it
 * holds, and screen lines between such messages are renderings or notices of it); what follows is
 * the tail: an answer still streaming, a prompt the CLI has not written yet. When nothing lines up,
 * the tail is the screen from its newest prompt that the log does not hold, if any (a log lagging
 * behind its first prompt), or everything when the log holds no message at all.
 */
export function liveTail(log: readonly ParsedMessage[], screen: readonly ParsedMessage[]): LiveTail {
  if (screen.length === 0) return { tail: [], matched: 0 };
  if (log.length === 0) return { tail: screen, matched: 0 };
  const s = screen.map(keyOf);
  const l = log.map(keyOf);
  const n = s.length;
  const m = l.length;
  const width = m + 1;
  // best[i * width + j]: most matches between screen[i..] and log[j..].
  const best = new Uint16Array((n + 1) * width);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      const skip = Math.max(best[(i + 1) * width + j] ?? 0, best[i * width + j + 1] ?? 0);
      const take = sameKey(s[i] as Key, l[j] as Key) ? 1 + (best[(i + 1) * width + j + 1] ?? 0) : 0;
      best[i * width + j] = Math.max(skip, take);
    }
  }
  let last = -1;
  let matched = 0;
  for (let i = 0, j = 0; i < n && j < m; ) {
    const here = best[i * width + j] ?? 0;
    if (here === 0) break;
    if (here === (best[i * width + j + 1] ?? 0)) {
      // The same count is reachable with a newer log message: the screen shows the newest ones.
      j++;
    } else if (sameKey(s[i] as Key, l[j] as Key) && here === 1 + (best[(i + 1) * width + j + 1] ?? 0)) {
      last = i;
      matched++;
      i++;
      j++;
    } else {
      i++;
    }
  }
  if (matched > 0) return { tail: screen.slice(last + 1), matched };
  // Nothing lines up: only a prompt the log does not hold (and what follows it) is new.
  for (let i = n - 1; i >= 0; i--) {
    const key = s[i] as Key;
    if (key.role !== ChatRole.USER) continue;
    const logged = l.some((k) => sameKey(key, k));
    return { tail: logged ? [] : screen.slice(i), matched: 0 };
  }
  return { tail: [], matched: 0 };
}

/** True when a message read off the screen and one read from the log are the same message. */
export function sameMessage(screen: ParsedMessage, log: ParsedMessage): boolean {
  return sameKey(keyOf(screen), keyOf(log));
}

interface Key {
  readonly role: ChatRole;
  /**
   * Letters and digits of the text, lower case, code fence lines left out: what survives wrapping
   * and Markdown rendering (a fenced block drawn without its fences, a table as a box).
   */
  readonly text: string;
  /** The raw text with runs of white space as one, for texts without letters or digits. */
  readonly raw: string;
  readonly toolName: string;
  readonly target: string;
  /** Tool name, target and text together (where a screen draws a tool's command). */
  readonly whole: string;
}

function keyOf(message: ParsedMessage): Key {
  const text = normalize(message.role === ChatRole.TOOL ? message.text : message.text.replace(FENCE_LINE, ""));
  const target = normalize(message.toolTarget ?? "");
  return {
    role: message.role,
    text,
    raw: message.text.replace(/\s+/g, " ").trim(),
    toolName: message.toolName ?? "",
    target,
    whole: normalize(message.toolName ?? "") + target + text,
  };
}

function normalize(text: string): string {
  return text
    .normalize("NFC")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, "");
}

function sameKey(a: Key, b: Key): boolean {
  if (a.role !== b.role) return false;
  if (a.role === ChatRole.TOOL) return sameTool(a, b);
  if (a.role === ChatRole.SYSTEM && sameNotice(a.text, b.text)) return true;
  return sameText(a, b);
}

function sameText(a: Key, b: Key): boolean {
  if (a.text === "" || b.text === "") return a.text === b.text && a.raw === b.raw;
  const [short, long] = a.text.length <= b.text.length ? [a.text, b.text] : [b.text, a.text];
  if (short.length < MIN_CONTAINED_CHARS) return long.startsWith(short);
  return long.includes(short.slice(0, COMPARE_CHARS));
}

/** Interrupt and compaction notices are worded differently on screen and in the log. */
function sameNotice(a: string, b: string): boolean {
  for (const kind of ["interrupt", "compact"]) if (a.includes(kind) && b.includes(kind)) return true;
  return false;
}

/**
 * Two tool messages are the same call when one's command or file shows in the other; a screen line
 * that summarises calls (no name, or a summary kind) stands for any call.
 */
function sameTool(a: Key, b: Key): boolean {
  if (SUMMARY_TOOL_NAMES.has(a.toolName) || SUMMARY_TOOL_NAMES.has(b.toolName)) return true;
  if (a.target === "" || b.target === "") return true;
  return b.whole.includes(a.target.slice(0, COMPARE_CHARS)) || a.whole.includes(b.target.slice(0, COMPARE_CHARS));
}
