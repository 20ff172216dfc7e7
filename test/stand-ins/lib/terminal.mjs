// Terminal plumbing shared by the stand-in CLIs: raw keyboard input (with bracketed paste) and
// full-line drawing helpers. Plain JavaScript so the stand-ins start in a few tens of milliseconds.
import { appendFileSync } from "node:fs";

/** ESC: starts every control sequence. */
export const ESC = "\x1b";
/** Bracketed paste start / end markers (tmux `paste-buffer -p` wraps text in them). */
const PASTE_START = `${ESC}[200~`;
const PASTE_END = `${ESC}[201~`;
/** The arrow keys by the final byte of their sequence (`ESC [ A` or `ESC O A`). */
const ARROWS = { A: "up", B: "down", C: "right", D: "left" };
/** A CSI or SS3 sequence (cursor keys and the like): arrows are passed on, the rest ignored. */
const CONTROL_SEQUENCE = new RegExp(`^${ESC}(\\[[0-9;?]*[ -/]*[@-~]|O.)`);

/**
 * Reads keys from a raw-mode stdin and calls `onKey` with one of:
 * `{type:"text", text}` (typed characters or a whole bracketed paste), `{type:"enter"}`,
 * `{type:"escape"}`, `{type:"backspace"}`, `{type:"ctrl-c"}`, `{type:"kill-line"}` (Ctrl-U).
 * Cursor keys and other sequences are ignored.
 */
export function readKeys(onKey) {
  if (process.stdin.isTTY) process.stdin.setRawMode(true);
  process.stdin.setEncoding("utf8");
  let paste;
  const keyLog = process.env.STANDIN_KEYLOG;
  // A CLI too busy to take its input up at once (STANDIN_INPUT_LAG_MS): keys are handled that late,
  // in order.
  const lag = Number(process.env.STANDIN_INPUT_LAG_MS ?? "0") || 0;
  process.stdin.on("data", (chunk) => {
    // Every byte the pane typed into the program, for tests that must show nothing was typed.
    if (keyLog) appendFileSync(keyLog, chunk);
    if (lag > 0) setTimeout(() => handle(chunk), lag);
    else handle(chunk);
  });
  const handle = (chunk) => {
    let rest = chunk;
    while (rest.length > 0) {
      if (paste !== undefined) {
        const end = rest.indexOf(PASTE_END);
        if (end < 0) {
          paste += rest;
          return;
        }
        paste += rest.slice(0, end);
        onKey({ type: "text", text: paste.replace(/\r\n?/g, "\n") });
        paste = undefined;
        rest = rest.slice(end + PASTE_END.length);
        continue;
      }
      if (rest.startsWith(PASTE_START)) {
        paste = "";
        rest = rest.slice(PASTE_START.length);
        continue;
      }
      const ch = rest[0];
      if (ch === ESC) {
        const seq = CONTROL_SEQUENCE.exec(rest);
        if (seq) {
          rest = rest.slice(seq[0].length);
          const arrow = ARROWS[seq[0].slice(-1)];
          if (arrow && seq[0].length === 3) onKey({ type: "arrow", direction: arrow });
          continue;
        }
        onKey({ type: "escape" });
        rest = rest.slice(1);
        continue;
      }
      rest = rest.slice(1);
      if (ch === "\r" || ch === "\n") onKey({ type: "enter" });
      else if (ch === "\x7f" || ch === "\b") onKey({ type: "backspace" });
      else if (ch === "\x03") onKey({ type: "ctrl-c" });
      else if (ch === "\x15") onKey({ type: "kill-line" });
      else if (ch >= " ") onKey({ type: "text", text: ch });
    }
  };
}

/** The pane's size (tmux's default 80x24 when unknown). */
export function screenSize() {
  return { cols: process.stdout.columns || 80, rows: process.stdout.rows || 24 };
}

/** Sets the terminal (pane) title with OSC 0, which tmux shows as `#{pane_title}`. */
export function setTitle(title) {
  process.stdout.write(`${ESC}]0;${title}\x07`);
}

/** Splits text into lines no wider than `width`, continuation lines prefixed with `indent`. */
export function wrap(text, width, firstPrefix = "", indent = "") {
  const out = [];
  const paragraphs = String(text).split("\n");
  paragraphs.forEach((para, i) => {
    let line = i === 0 ? firstPrefix : indent;
    let room = width - line.length;
    let rest = para;
    if (rest === "") {
      out.push(line.trimEnd());
      return;
    }
    while (rest.length > 0) {
      if (room <= 0) room = 1;
      out.push(line + rest.slice(0, room));
      rest = rest.slice(room);
      line = indent;
      room = width - indent.length;
    }
  });
  return out;
}

/**
 * Draws `lines` as the whole screen (cursor positioning and erase-to-end-of-line only, so nothing is
 * pushed into tmux's scrollback), cursor left after `cursor` (row, col; 1-based) when given.
 */
export function drawFullScreen(lines, rows, cursor) {
  let out = `${ESC}[?25l`;
  for (let i = 0; i < rows; i++) out += `${ESC}[${i + 1};1H${lines[i] ?? ""}${ESC}[K`;
  if (cursor) out += `${ESC}[${cursor.row};${cursor.col}H${ESC}[?25h`;
  process.stdout.write(out);
}

/** Sleeps `ms`, rejecting with the signal's reason when it aborts first. */
export function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** A duration from the environment (milliseconds), or `fallback`. */
export function envMs(name, fallback) {
  const value = Number(process.env[name]);
  return Number.isFinite(value) && value >= 0 && process.env[name] !== "" ? value : fallback;
}
