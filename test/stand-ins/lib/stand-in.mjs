// The conversation engine shared by the stand-in CLIs: typed prompts start turns whose course is
// chosen by words in the prompt (README.md lists them); each CLI adapter draws its own screen and
// writes its own native log from the hooks called here.
import { envMs, readKeys, sleep } from "./terminal.mjs";

/** Time before the first output of a turn (a model "thinking"). */
const THINK_MS = envMs("STANDIN_THINK_MS", 150);
/** Time between the last tool and the final reply. */
const TURN_MS = envMs("STANDIN_TURN_MS", 400);
/** How long a `long` turn runs unless interrupted. */
const LONG_MS = envMs("STANDIN_LONG_MS", 600_000);
/** Two Ctrl-C presses within this window exit (like the real CLIs). */
const CTRL_C_WINDOW_MS = 2_000;
/** How often spinners advance while a turn runs. */
const SPINNER_MS = 120;

/** The tool call an `approve` prompt asks permission for. */
export const APPROVAL_CALL = { tool: "Bash", command: "rm -rf build", description: "Remove the build folder" };
/** The tool call a `tool` prompt runs without asking. */
export const READ_CALL = { tool: "Read", command: "README.md", description: "Read README.md" };

/** True when `word` appears as a whole word in `text` (case-insensitive). */
function hasWord(text, word) {
  return new RegExp(`\\b${word}\\b`, "i").test(text);
}

/**
 * Runs a stand-in: `adapter` supplies `render(app)`, and log hooks `started(app)`,
 * `turnStarted(app, prompt)`, `toolCall(app, call)`, `approvalWaiting(app, call, waiting)`,
 * `toolResult(app, call, output, isError)`, `reply(app, text)`, `turnCompleted(app, ms)`,
 * `turnInterrupted(app, pendingCall, answered)`, `apiError(app, message)`, `exiting(app)`; optional
 * `historyAdded(app, item)` for CLIs that print history into the scrollback, and
 * `returnsUnansweredPrompt` for CLIs that put a prompt interrupted before any output back in the input box.
 */
export class StandIn {
  constructor(adapter) {
    this.adapter = adapter;
    /** Text in the input box. */
    this.input = "";
    /** "idle" | "working" | "approval". */
    this.mode = "idle";
    /** Transcript items shown on screen: {kind: user|assistant|tool|result|interrupted|error|done, text}. */
    this.items = [];
    /** Prompts submitted while a turn ran, started in order afterwards. */
    this.queue = [];
    this.turn = undefined;
    this.spinnerFrame = 0;
    this.lastCtrlC = 0;
    this.notice = "";
    this.cwd = process.cwd();
  }

  /** Starts reading keys and draws the first screen. */
  start() {
    // Bracketed paste on, so tmux `paste-buffer -p` delivers multi-line text whole.
    process.stdout.write("\x1b[?2004h");
    process.stdout.on("resize", () => this.redraw());
    for (const sig of ["SIGTERM", "SIGHUP", "SIGINT"]) process.on(sig, () => this.exit(0));
    readKeys((key) => this.onKey(key));
    this.adapter.started(this);
    this.redraw();
  }

  /** Redraws the screen. */
  redraw() {
    this.adapter.render(this);
  }

  /** Adds a transcript item and tells adapters that print history. */
  add(kind, text) {
    const item = { kind, text };
    this.items.push(item);
    this.adapter.historyAdded?.(this, item);
    return item;
  }

  /** Seconds the current turn has run. */
  get elapsedSeconds() {
    return this.turn ? Math.floor((Date.now() - this.turn.started) / 1000) : 0;
  }

  onKey(key) {
    if (key.type === "ctrl-c") {
      if (this.turn) {
        this.turn.controller.abort(new Error("interrupted"));
        return;
      }
      if (Date.now() - this.lastCtrlC < CTRL_C_WINDOW_MS) this.exit(0);
      this.lastCtrlC = Date.now();
      this.input = "";
      this.notice = "Press Ctrl-C again to exit";
      this.redraw();
      return;
    }
    this.notice = "";
    if (this.mode === "approval") {
      this.onApprovalKey(key);
      return;
    }
    switch (key.type) {
      case "text":
        this.input += key.text;
        break;
      case "backspace":
        this.input = this.input.slice(0, -1);
        break;
      case "kill-line":
        this.input = "";
        break;
      case "escape":
        if (this.turn) this.turn.controller.abort(new Error("interrupted"));
        break;
      case "enter": {
        const prompt = this.input.trim();
        this.input = "";
        if (prompt !== "") {
          if (this.turn) this.queue.push(prompt);
          else void this.runTurn(prompt);
        }
        break;
      }
    }
    this.redraw();
  }

  onApprovalKey(key) {
    const answer = this.turn?.answer;
    if (!answer) return;
    if (key.type === "enter" || (key.type === "text" && /^[1y]$/i.test(key.text))) answer(true);
    else if (key.type === "escape" || (key.type === "text" && /^[3n]$/i.test(key.text))) answer(false);
  }

  /** One turn, shaped by the words in `prompt`. */
  async runTurn(prompt) {
    const controller = new AbortController();
    const signal = controller.signal;
    // `answered`: the "model" produced output (a tool call, text or an error) in this turn.
    this.turn = { controller, started: Date.now(), prompt, pending: undefined, answer: undefined, answered: false };
    this.mode = "working";
    this.add("user", prompt);
    this.adapter.turnStarted(this, prompt);
    const spinner = setInterval(() => {
      this.spinnerFrame++;
      this.redraw();
    }, SPINNER_MS);
    this.redraw();
    try {
      await sleep(THINK_MS, signal);
      this.turn.answered = true;
      if (hasWord(prompt, "error")) {
        const message = 'API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}';
        this.add("error", message);
        this.adapter.apiError(this, message);
        this.finish();
        return;
      }
      if (hasWord(prompt, "tool")) await this.runTool(READ_CALL, false, "# Project\n", signal);
      if (hasWord(prompt, "approve")) await this.runTool(APPROVAL_CALL, true, "removed build/", signal);
      if (hasWord(prompt, "long")) await sleep(LONG_MS, signal);
      await sleep(TURN_MS, signal);
      const reply = hasWord(prompt, "multiline")
        ? `Here is the plan:\n1. read the code\n2. fix it\nDone: ${prompt}`
        : `Done: ${prompt}`;
      this.add("assistant", reply);
      this.adapter.reply(this, reply);
      const ms = Date.now() - this.turn.started;
      this.add("done", `${Math.max(1, Math.round(ms / 1000))}s`).ms = ms;
      this.adapter.turnCompleted(this, ms);
      this.finish();
    } catch {
      const pending = this.turn.pending;
      const answered = this.turn.answered;
      if (!answered && this.adapter.returnsUnansweredPrompt) {
        // Claude Code: Esc before the first reply takes the prompt back into the input box.
        this.items.splice(this.items.lastIndexOf(this.items.findLast((i) => i.kind === "user")), 1);
        this.input = prompt;
      } else {
        this.add("interrupted", pending ? "tool" : "turn");
      }
      this.adapter.turnInterrupted(this, pending, answered);
      this.finish();
    } finally {
      clearInterval(spinner);
      this.redraw();
    }
  }

  /** Logs and shows one tool call; asks for approval first when `ask`. Rejection interrupts. */
  async runTool(call, ask, output, signal) {
    this.turn.pending = call;
    this.add("tool", call);
    this.adapter.toolCall(this, call);
    if (ask) {
      this.mode = "approval";
      this.adapter.approvalWaiting(this, call, true);
      this.redraw();
      const approved = await new Promise((resolve, reject) => {
        this.turn.answer = resolve;
        signal.addEventListener("abort", () => reject(signal.reason), { once: true });
      });
      this.turn.answer = undefined;
      this.mode = "working";
      this.adapter.approvalWaiting(this, call, false);
      if (!approved) throw new Error("rejected");
      this.redraw();
    }
    await sleep(THINK_MS, signal);
    this.add("result", output);
    this.adapter.toolResult(this, call, output, false);
    this.turn.pending = undefined;
  }

  finish() {
    this.turn = undefined;
    this.mode = "idle";
    const next = this.queue.shift();
    if (next !== undefined) setImmediate(() => void this.runTurn(next));
  }

  /** Cleans up (the adapter removes live state files) and exits. */
  exit(code) {
    try {
      this.adapter.exiting(this);
    } finally {
      process.exit(code);
    }
  }
}
