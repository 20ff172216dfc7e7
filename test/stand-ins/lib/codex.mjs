// Codex CLI stand-in: an inline TUI on the normal screen (history scrolls into tmux's scrollback
// above a bottom viewport with the `›` composer), the title spinner, the approval prompt, and the
// rollout JSONL of docs/status.md under $CODEX_HOME/sessions/YYYY/MM/DD/. See README.md.
import { randomUUID } from "node:crypto";
import { appendFileSync, mkdirSync, readdirSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { StandIn } from "./stand-in.mjs";
import { ESC, screenSize, setTitle, wrap } from "./terminal.mjs";

/** Version in session_meta; below 0.61 no task events are written (legacy rollouts). */
const VERSION = process.env.STANDIN_VERSION || "0.171.0";
const MODEL = "gpt-5.5";
/** Rows of the bottom viewport (composer, status, approval); history scrolls above it. */
const VIEWPORT_ROWS = 12;
const BRAILLE = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

const legacy = (() => {
  const [major, minor] = VERSION.split(".").map(Number);
  return major === 0 && minor < 61;
})();

/** The rollout of a thread under `sessions/YYYY/MM/DD/` (its name ends in the thread id). */
function findRollout(dir, threadId) {
  let entries = [];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return undefined;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      const found = findRollout(path, threadId);
      if (found) return found;
    } else if (entry.name.endsWith(`-${threadId}.jsonl`)) return path;
  }
  return undefined;
}

function pad2(n) {
  return String(n).padStart(2, "0");
}

class CodexAdapter {
  constructor() {
    this.home = process.env.CODEX_HOME || join(homedir(), ".codex");
    this.threadId = randomUUID();
    this.rollout = undefined;
    // `codex resume <thread id>` goes on writing that thread's rollout, wherever its day folder is.
    const resumeAt = process.argv.indexOf("resume");
    const resumed = resumeAt >= 0 ? process.argv[resumeAt + 1] : undefined;
    if (resumed) {
      this.rollout = findRollout(join(this.home, "sessions"), resumed);
      if (!this.rollout) {
        process.stderr.write(`No saved session found with ID ${resumed}.\n`);
        process.exit(1);
      }
      this.threadId = resumed;
    }
    this.threadName = "";
    this.title = "";
  }

  // --- native state -------------------------------------------------------------------------

  line(type, payload) {
    appendFileSync(this.rollout, `${JSON.stringify({ timestamp: new Date().toISOString(), type, payload })}\n`);
  }

  event(payload) {
    this.line("event_msg", payload);
  }

  started(app) {
    process.stdout.write(`${ESC}[H${ESC}[2J`);
    this.historyAdded(app, { kind: "header" });
  }

  turnStarted(_app, prompt) {
    if (!this.rollout) {
      const now = new Date();
      const day = join(this.home, "sessions", String(now.getFullYear()), pad2(now.getMonth() + 1), pad2(now.getDate()));
      mkdirSync(day, { recursive: true });
      const stamp = `${now.getFullYear()}-${pad2(now.getMonth() + 1)}-${pad2(now.getDate())}T${pad2(now.getHours())}-${pad2(now.getMinutes())}-${pad2(now.getSeconds())}`;
      this.rollout = join(day, `rollout-${stamp}-${this.threadId}.jsonl`);
      this.line("session_meta", {
        id: this.threadId,
        timestamp: now.toISOString(),
        cwd: process.cwd(),
        originator: "codex-tui",
        cli_version: VERSION,
        source: "cli",
        model_provider: "mock",
      });
      this.threadName = prompt.slice(0, 40);
    }
    this.turnId = randomUUID();
    this.turnStart = Date.now();
    if (!legacy) {
      this.event({
        type: "task_started",
        turn_id: this.turnId,
        model_context_window: 258400,
        collaboration_mode_kind: "default",
        started_at: Math.floor(this.turnStart / 1000),
      });
    }
    this.line("turn_context", {
      turn_id: this.turnId,
      cwd: process.cwd(),
      approval_policy: "on-request",
      sandbox_policy: { type: "workspace-write" },
      model: MODEL,
      effort: "medium",
      summary: "auto",
    });
    this.line("response_item", { type: "message", role: "user", content: [{ type: "input_text", text: prompt }] });
    this.event({ type: "user_message", message: prompt, images: [], local_images: [], text_elements: [] });
    this.lastReply = null;
  }

  /**
   * A prompt typed while a turn runs: 0.17x steers it into that turn, as the real 0.171.0 records it
   * (a user `response_item` and an `item_completed` UserMessage with the running turn's `turn_id`).
   * Legacy versions queue it.
   */
  steered(_app, prompt) {
    if (legacy) return false;
    this.line("response_item", { type: "message", role: "user", content: [{ type: "input_text", text: prompt }] });
    this.event({
      type: "item_completed",
      thread_id: this.threadId,
      turn_id: this.turnId,
      item: { type: "UserMessage", id: randomUUID(), content: [{ type: "text", text: prompt }] },
    });
    return true;
  }

  toolCall(_app, call) {
    this.callId = `call_${randomUUID().replace(/-/g, "").slice(0, 24)}`;
    const args =
      call.tool === "Bash"
        ? {
            cmd: call.command,
            workdir: process.cwd(),
            sandbox_permissions: "require_escalated",
            justification: call.description,
          }
        : { cmd: `cat ${call.command}`, workdir: process.cwd() };
    this.line("response_item", {
      type: "function_call",
      name: "exec_command",
      arguments: JSON.stringify(args),
      call_id: this.callId,
    });
  }

  approvalWaiting() {
    // Codex never persists an approval wait (docs/status.md): nothing to write.
  }

  toolResult(_app, _call, output) {
    this.line("response_item", { type: "function_call_output", call_id: this.callId, output });
  }

  reply(_app, text) {
    this.lastReply = text;
    this.event({ type: "agent_message", message: text, phase: "final_answer" });
    this.line("response_item", {
      type: "message",
      role: "assistant",
      content: [{ type: "output_text", text }],
      phase: "final_answer",
    });
  }

  tokenCount() {
    // Each turn is one request of 1200 in (1000 of them cached) and 40 out; the totals add up, and
    // the plan's 5-hour window fills by 10 % a turn (resets an hour after the first turn).
    this.turns = (this.turns ?? 0) + 1;
    this.resetsAt ??= Math.floor(Date.now() / 1000) + 3600;
    const usage = (n) => ({
      input_tokens: 1200 * n,
      cached_input_tokens: 1000 * n,
      output_tokens: 40 * n,
      reasoning_output_tokens: 8 * n,
      total_tokens: 1240 * n,
    });
    this.event({
      type: "token_count",
      info: { total_token_usage: usage(this.turns), last_token_usage: usage(1), model_context_window: 258400 },
      rate_limits: {
        primary: { used_percent: 10 * this.turns, window_minutes: 300, resets_at: this.resetsAt },
        secondary: { used_percent: 2 * this.turns, window_minutes: 10080, resets_at: this.resetsAt + 86400 },
        plan_type: "plus",
        rate_limit_reached_type: null,
      },
    });
  }

  complete(ms) {
    this.tokenCount();
    if (legacy) return;
    this.event({
      type: "task_complete",
      turn_id: this.turnId,
      last_agent_message: this.lastReply,
      started_at: Math.floor(this.turnStart / 1000),
      completed_at: Math.floor(Date.now() / 1000),
      duration_ms: ms,
      time_to_first_token_ms: Math.min(ms, 150),
    });
  }

  turnCompleted(_app, ms) {
    this.complete(ms);
  }

  turnInterrupted(_app, pending) {
    if (pending)
      this.line("response_item", { type: "function_call_output", call_id: this.callId, output: "aborted by user" });
    if (legacy) return;
    this.event({
      type: "turn_aborted",
      turn_id: this.turnId,
      reason: "interrupted",
      completed_at: Math.floor(Date.now() / 1000),
      duration_ms: Date.now() - this.turnStart,
    });
  }

  apiError(_app, message) {
    this.event({ type: "error", message: `stream error: ${message}` });
    this.complete(Date.now() - this.turnStart);
  }

  exiting() {
    process.stdout.write(`${ESC}[?2004l${ESC}[r${ESC}[${screenSize().rows};1H\r\n`);
  }

  // --- screen -------------------------------------------------------------------------------

  historyLines(item, cols) {
    switch (item.kind) {
      case "header":
        return [`>_ OpenAI Codex (v${VERSION})`, `   ${process.cwd()}`, ""];
      case "user":
        return [...wrap(item.text, cols, "› ", "  "), ""];
      case "assistant":
        return wrap(item.text, cols, "• ", "  ");
      case "tool": {
        const cmd = item.text.tool === "Bash" ? item.text.command : `cat ${item.text.command}`;
        return [`• Running ${cmd}`, ""];
      }
      case "result": {
        const call = this.pendingCall ?? { command: "" };
        const cmd = call.tool === "Bash" ? call.command : `cat ${call.command}`;
        const approved = call.tool === "Bash" ? [`✔ You approved codex to run ${cmd} this time`, ""] : [];
        return [...approved, `• Ran ${cmd}`, ...wrap(item.text.split("\n")[0], cols, "  └ ", "    "), ""];
      }
      case "interrupted":
        return ["■ Conversation interrupted - use /feedback if something went wrong", ""];
      case "error":
        return [...wrap(`stream error: ${item.text}`, cols, "■ ", "  "), ""];
      case "done": {
        const now = new Date();
        return [`  Worked for ${item.text} • ${pad2(now.getHours())}:${pad2(now.getMinutes())}`, ""];
      }
      default:
        return [];
    }
  }

  /** Prints history lines into the region above the viewport, so they scroll into tmux's history. */
  historyAdded(_app, item) {
    if (item.kind === "tool") this.pendingCall = item.text;
    const { cols, rows } = screenSize();
    const lines = this.historyLines(item, cols);
    if (lines.length === 0) return;
    const top = Math.max(1, rows - VIEWPORT_ROWS);
    let out = `${ESC}[1;${top}r${ESC}[${top};1H`;
    for (const line of lines) out += `\r\n${line}${ESC}[K`;
    process.stdout.write(`${out}${ESC}[r`);
  }

  render(app) {
    const { cols, rows } = screenSize();
    const dir = process.cwd();
    const name = this.threadName || "Codex";
    let title = `${name} | ${dir}`;
    if (app.mode === "approval") title = `${app.spinnerFrame % 2 ? "[ . ]" : "[ ! ]"} Action Required | ${dir}`;
    else if (app.mode === "working") title = `${BRAILLE[app.spinnerFrame % BRAILLE.length]} ${name} | ${dir}`;
    if (title !== this.title) {
      setTitle(title);
      this.title = title;
    }
    let view;
    let cursor;
    if (app.mode === "approval") {
      const call = app.turn?.pending ?? { command: "", description: "" };
      view = [
        "  Would you like to run the following command?",
        "",
        `  Reason: ${call.description}`,
        "",
        `  $ ${call.command}`,
        "",
        ...[
          "1. Yes, proceed (y)",
          "2. Yes, and don't ask again for this command (p)",
          "3. No, and tell Codex what to do differently (esc)",
        ].map((o, i) => `${i === app.selected ? "› " : "  "}${o}`),
        "",
        "  Press enter to confirm or esc to cancel",
      ];
    } else {
      const status =
        app.mode === "working"
          ? [`${app.spinnerFrame % 2 ? "◦" : "•"} Working (${app.elapsedSeconds}s • esc to interrupt)`, ""]
          : [];
      const composer = app.input === "" ? ["› Ask Codex to do anything"] : wrap(app.input, cols, "› ", "  ");
      view = [
        ...status,
        ...composer,
        "",
        `  ${MODEL} default · ${dir}${this.threadName ? ` · ${this.threadName}` : ""}`,
        app.notice ? `  ${app.notice}` : "  ← for agents · ? for shortcuts",
      ];
      const last = composer[composer.length - 1];
      cursor = { row: rows - 3, col: Math.min(cols, app.input === "" ? 3 : last.length + 1) };
    }
    const height = Math.min(VIEWPORT_ROWS, rows);
    const lines = view.slice(-height);
    while (lines.length < height) lines.unshift("");
    let out = `${ESC}[?25l`;
    lines.forEach((line, i) => {
      out += `${ESC}[${rows - height + i + 1};1H${line}${ESC}[K`;
    });
    if (cursor) out += `${ESC}[${cursor.row};${cursor.col}H${ESC}[?25h`;
    process.stdout.write(out);
  }
}

/** Runs the Codex stand-in in the current terminal (its argv stays `node …/codex`, like codex.js). */
export function runCodex() {
  new StandIn(new CodexAdapter()).start();
}
