// The conversation engine shared by the stand-in CLIs: typed prompts start turns whose course is
// chosen by words in the prompt (README.md lists them); each CLI adapter draws its own screen and
// writes its own native log from the hooks called here.
import { envMs, readKeys, sleep } from "./terminal.mjs";

/**
 * The `markdown` reply: a fenced block, a list, a table, a link, and markup that must never run
 * (a script, an event handler, a `javascript:` link), as an agent's answer may hold any of them.
 */
const MARKDOWN_REPLY = [
  "Markdown reply: here is **the helper**.",
  "",
  "```ts",
  "export function add(a: number, b: number): number {",
  "  return a + b;",
  "}",
  "```",
  "",
  "- first point",
  "- second point with `inline code`",
  "",
  "| Input | Output |",
  "| ----- | ------ |",
  "| 1, 2  | 3      |",
  "",
  "See [the docs](https://example.com/docs) and [this](javascript:alert(1)).",
  "",
  '<img src="x" onerror="window.__saInjected = true"><script>window.__saInjected = true</script>',
].join("\n");

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
/** The plan-limit error of the `limit` word, in Claude Code 2.1.332's wording (the usage readers know it). */
const LIMIT_MESSAGE = "You've hit your session limit · resets 3pm (UTC)";

/** The tool call an `approve` prompt asks permission for. */
export const APPROVAL_CALL = { tool: "Bash", command: "rm -rf build", description: "Remove the build folder" };
/** The question an `askuser` prompt asks (Claude Code's AskUserQuestion), with its options. */
export const QUESTION_CALL = {
  tool: "AskUserQuestion",
  question: "Which database should I use?",
  options: ["Postgres", "SQLite"],
};
/** The last option of a question: the person types their own answer. */
export const FREE_TEXT_OPTION = "Type something.";
/**
 * The approval's options, in order, with what each does: the adapters draw `approvalOptions` (their
 * own words) in this order.
 */
export const APPROVAL_RESULTS = ["allow", "always", "reject"];
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
 * `historyAdded(app, item)` for CLIs that print history into the scrollback, `steered(app, prompt)` for
 * CLIs that take a prompt typed during a turn into that turn (true when it did; else it is queued),
 * `queued(app, prompt, operation)` for CLIs that log such a queued prompt ("enqueue", then "dequeue"
 * when its turn starts), and
 * `returnsUnansweredPrompt` for CLIs that put a prompt interrupted before any output back in the input box,
 * `approvalKey(app, key, pick)` for CLIs whose approval takes some keys its own way (true when it took the key).
 */
export class StandIn {
  constructor(adapter) {
    this.adapter = adapter;
    /** Text in the input box. */
    this.input = "";
    /** "idle" | "working" | "approval". */
    this.mode = "idle";
    /** The highlighted option of an approval or a question (moved with the arrow keys). */
    this.selected = 0;
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
    if (this.mode === "question") {
      this.onQuestionKey(key);
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
        // `/exit` at idle ends the CLI, as the real ones do (no turn, nothing logged).
        if (prompt === "/exit" && !this.turn) {
          this.exit(0);
          return;
        }
        if (prompt !== "") {
          // A CLI that steers a follow-up into the running turn (Codex 0.17x) records it there; the others queue it.
          if (this.turn && this.adapter.steered?.(this, prompt)) this.add("user", prompt);
          else if (this.turn) {
            this.queue.push(prompt);
            this.adapter.queued?.(this, prompt, "enqueue");
          } else void this.runTurn(prompt);
        }
        break;
      }
    }
    this.redraw();
  }

  /**
   * Keys on the approval: `y`/`1` allows, `p`/`a`/`2` allows always, `n`/`3`/Escape rejects, the
   * arrows move the highlight and Enter picks the highlighted option.
   */
  onApprovalKey(key) {
    const answer = this.turn?.answer;
    if (!answer) return;
    // An adapter whose CLI offers fewer options (pi's Yes/No) names them in `approvalChoices`.
    const results = this.adapter.approvalChoices ?? APPROVAL_RESULTS;
    const pick = (index) => answer(results[index] !== "reject");
    // A CLI whose dialog answers some keys its own way (Kilo's reject box) takes them first.
    if (this.adapter.approvalKey?.(this, key, pick)) {
      this.redraw();
      return;
    }
    if (key.type === "arrow") {
      const step = key.direction === "up" || key.direction === "left" ? -1 : 1;
      this.selected = Math.min(results.length - 1, Math.max(0, this.selected + step));
      this.redraw();
    } else if (key.type === "enter") pick(this.selected);
    else if (key.type === "text" && /^[1y]$/i.test(key.text)) pick(0);
    else if (key.type === "text" && /^[2pa]$/i.test(key.text)) pick(1);
    else if (key.type === "escape" || (key.type === "text" && /^[3n]$/i.test(key.text))) pick(results.length - 1);
  }

  /**
   * Keys on a question: a digit picks that option, the arrows move the highlight and Enter picks it;
   * the last option opens a text box whose Enter sends the typed answer; Escape interrupts.
   */
  onQuestionKey(key) {
    const answer = this.turn?.answer;
    if (!answer) return;
    const options = [...QUESTION_CALL.options, FREE_TEXT_OPTION];
    if (this.questionText !== undefined) {
      if (key.type === "text") this.questionText += key.text;
      else if (key.type === "backspace") this.questionText = this.questionText.slice(0, -1);
      else if (key.type === "enter" && this.questionText.trim() !== "") answer(this.questionText.trim());
      this.redraw();
      return;
    }
    const pick = (index) => {
      if (index === options.length - 1) {
        this.questionText = "";
        this.redraw();
      } else answer(options[index]);
    };
    if (key.type === "arrow") {
      const step = key.direction === "up" ? -1 : 1;
      this.selected = Math.min(options.length - 1, Math.max(0, this.selected + step));
      this.redraw();
    } else if (key.type === "enter") pick(this.selected);
    else if (key.type === "text" && /^[1-9]$/.test(key.text) && Number(key.text) <= options.length)
      pick(Number(key.text) - 1);
    else if (key.type === "escape") this.turn?.controller.abort(new Error("interrupted"));
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
      if (hasWord(prompt, "error") || hasWord(prompt, "limit")) {
        const message = hasWord(prompt, "limit")
          ? LIMIT_MESSAGE
          : 'API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}';
        this.add("error", message);
        this.adapter.apiError(this, message);
        this.finish();
        return;
      }
      if (hasWord(prompt, "tool")) await this.runTool(READ_CALL, false, "# Project\n", signal);
      if (hasWord(prompt, "approve")) await this.runTool(APPROVAL_CALL, true, "removed build/", signal);
      let answered = "";
      if (hasWord(prompt, "askuser") && this.adapter.asksQuestions) answered = await this.askQuestion(signal);
      if (hasWord(prompt, "long")) await sleep(LONG_MS, signal);
      await sleep(TURN_MS, signal);
      const reply = hasWord(prompt, "markdown")
        ? MARKDOWN_REPLY
        : hasWord(prompt, "multiline")
          ? `Here is the plan:\n1. read the code\n2. fix it\nDone: ${prompt}`
          : `Done: ${prompt}${answered ? ` (answer: ${answered})` : ""}`;
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
      this.selected = 0;
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

  /** Asks QUESTION_CALL and waits for its answer (an option's label or typed text). */
  async askQuestion(signal) {
    const call = QUESTION_CALL;
    this.turn.pending = call;
    this.adapter.toolCall(this, call);
    this.mode = "question";
    this.selected = 0;
    this.questionText = undefined;
    this.adapter.approvalWaiting(this, call, true);
    this.redraw();
    const answer = await new Promise((resolve, reject) => {
      this.turn.answer = resolve;
      signal.addEventListener("abort", () => reject(signal.reason), { once: true });
    });
    this.turn.answer = undefined;
    this.questionText = undefined;
    this.mode = "working";
    this.adapter.approvalWaiting(this, call, false);
    this.adapter.toolResult(this, call, `User answered: ${answer}`, false);
    this.turn.pending = undefined;
    this.redraw();
    return answer;
  }

  finish() {
    this.turn = undefined;
    this.mode = "idle";
    const next = this.queue.shift();
    if (next === undefined) return;
    this.adapter.queued?.(this, next, "dequeue");
    setImmediate(() => void this.runTurn(next));
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
