// Factory droid stand-in: the TUI of 0.225 (`   prompt`, `⛬  reply`, `   Execute …` with `↳ result`,
// the approval box, the `Thinking...  (Press ESC to stop)` line, the title `⛬ <session title>`) and its
// session log (~/.factory/sessions/<cwd with / as ->/<sessionId>.jsonl, with `agent_turn_outcome`
// ending each turn and `<sessionId>.settings.json` holding the token sums). See README.md.
import { randomUUID } from "node:crypto";
import { appendFileSync, mkdirSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { APPROVAL_RESULTS, StandIn } from "./stand-in.mjs";
import { drawFullScreen, screenSize, setTitle, wrap } from "./terminal.mjs";

const VERSION = process.env.STANDIN_VERSION || "0.225.2";
const MODEL = "custom:Mock-Model-0";
const SPINNER = ["⠘", "⠰", "⢰", "⡆"];
/** The words of the approval's choices, in APPROVAL_RESULTS order. */
const APPROVAL_WORDS = {
  allow: "Yes, allow",
  always: "Yes, and always allow high impact commands (all commands that are irreversible)",
  reject: "No, cancel",
};
/** The token figures of each model call, as the real CLI sums them. */
const CALL_USAGE = { inputTokens: 1200, outputTokens: 40, cacheReadTokens: 0 };

class DroidAdapter {
  constructor() {
    const cwd = process.cwd();
    this.folder = join(homedir(), ".factory", "sessions", cwd.replaceAll("/", "-"));
    this.sessionId = randomUUID();
    this.path = join(this.folder, `${this.sessionId}.jsonl`);
    this.settings = join(this.folder, `${this.sessionId}.settings.json`);
    this.parent = null;
    this.title = "";
    this.sessionTitle = "";
    this.callCount = 0;
    this.calls = 0;
    this.turnId = "";
    this.returnsUnansweredPrompt = false;
  }

  // --- native state -------------------------------------------------------------------------

  message(message, id = randomUUID()) {
    const record = { type: "message", id, parentId: this.parent, timestamp: new Date().toISOString(), message };
    appendFileSync(this.path, `${JSON.stringify(record)}\n`);
    this.parent = id;
  }

  outcome(reason) {
    appendFileSync(
      this.path,
      `${JSON.stringify({ type: "agent_turn_outcome", turnId: this.turnId, reason, resultKind: "text" })}\n`,
    );
  }

  usage() {
    this.calls++;
    const sums = {
      inputTokens: CALL_USAGE.inputTokens * this.calls,
      outputTokens: CALL_USAGE.outputTokens * this.calls,
      cacheCreationTokens: 0,
      cacheReadTokens: 0,
      thinkingTokens: 0,
      factoryCredits: 0,
    };
    writeFileSync(
      this.settings,
      JSON.stringify(
        { model: MODEL, reasoningEffort: "none", tokenUsage: sums, lastCallTokenUsage: CALL_USAGE },
        null,
        2,
      ),
    );
  }

  started() {
    // droid writes its session log from the first prompt.
  }

  turnStarted(_app, prompt) {
    if (this.sessionTitle === "") {
      mkdirSync(this.folder, { recursive: true });
      this.sessionTitle = "Mock title";
      const start = {
        type: "session_start",
        id: this.sessionId,
        title: this.sessionTitle,
        owner: "unknown",
        version: 2,
      };
      appendFileSync(this.path, `${JSON.stringify({ ...start, cwd: process.cwd() })}\n`);
      this.turnId = randomUUID();
      this.message(
        {
          role: "user",
          content: [{ type: "text", text: "<system-reminder>context</system-reminder>" }],
          visibility: "llm_only",
        },
        `context-${this.turnId}`,
      );
    } else {
      this.turnId = randomUUID();
    }
    this.message(
      { role: "user", content: [{ type: "text", text: prompt }], userMessageSource: "cli_tui" },
      this.turnId,
    );
  }

  toolCall(_app, call) {
    this.callCount++;
    this.callId = `call_standin_${this.callCount}`;
    const input =
      call.tool === "Bash"
        ? { summary: call.description, command: call.command, riskLevel: "high", riskLevelReason: call.description }
        : { file_path: call.command };
    this.message({
      role: "assistant",
      content: [{ type: "tool_use", id: this.callId, name: call.tool === "Bash" ? "Execute" : "Read", input }],
      modelId: MODEL,
    });
    this.usage();
  }

  approvalWaiting() {
    // droid writes nothing while its dialog waits: the tool_use above has no result yet.
  }

  toolResult(_app, _call, output) {
    this.message({
      role: "user",
      content: [{ type: "tool_result", tool_use_id: this.callId, is_error: false, content: output }],
    });
    this.callId = undefined;
  }

  reply(_app, text) {
    this.message({ role: "assistant", content: [{ type: "text", text }], modelId: MODEL });
    this.usage();
  }

  turnCompleted() {
    this.outcome("completed");
  }

  turnInterrupted(_app, pending) {
    if (pending && this.callId) {
      // Escape on the dialog refuses the call; droid logs the turn as completed after it.
      this.message({
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: this.callId,
            is_error: true,
            content: "Tool execution cancelled by user",
          },
        ],
      });
      this.callId = undefined;
      this.outcome("completed");
      return;
    }
    this.message({
      role: "user",
      content: [{ type: "text", text: "Request cancelled by user" }],
      visibility: "llm_only",
    });
    this.message({
      role: "user",
      content: [{ type: "text", text: "Request interrupted by user" }],
      visibility: "llm_only",
    });
    this.outcome("cancelled");
  }

  apiError(_app, message) {
    this.message({ role: "assistant", content: [{ type: "text", text: `Error: ${message}` }], modelId: MODEL });
    this.outcome("completed");
  }

  exiting() {
    setTitle("");
    process.stdout.write(`To resume this session, run: droid --resume ${this.sessionId}\n`);
  }

  // --- screen -------------------------------------------------------------------------------

  itemLines(item, cols, items, index) {
    switch (item.kind) {
      case "user":
        return [...wrap(item.text, cols, "   ", "   "), ""];
      case "assistant":
        return [...wrap(item.text, cols, "⛬  ", "   "), ""];
      case "tool": {
        const next = items[index + 1];
        const done = next?.kind === "result";
        const stopped = !done && next !== undefined;
        const name = item.text.tool === "Bash" ? "Execute" : "Read";
        const outcome = done ? ["    ↳ Command completed successfully"] : stopped ? ["    ⎿ Interrupted"] : [];
        return [`   ${name} ${item.text.command}`, ...outcome, ""];
      }
      case "interrupted":
        // A refused call shows `⎿ Interrupted` under its tool line instead.
        return item.text === "tool" ? [] : ["●  Request cancelled by user", ""];
      case "error":
        return [...wrap(item.text, cols, "⛬  ", "   "), ""];
      default:
        return [];
    }
  }

  render(app) {
    const { cols, rows } = screenSize();
    const inner = cols - 2;
    const box = (text) => `│${text.padEnd(inner)}│`;
    let bottom;
    let cursor;
    if (app.mode === "approval") {
      const call = app.turn?.pending ?? { command: "", description: "" };
      bottom = [
        "  Command to approve · high risk",
        `  ↳ ${call.command}`,
        `  Why this needs approval: ${call.description}`,
        `╭${"─".repeat(inner)}╮`,
        ...APPROVAL_RESULTS.map((result) => box(`  ${APPROVAL_WORDS[result]}`)),
        `╰${"─".repeat(inner)}╯`,
        "  ↑↓ navigate   Enter select   Esc cancel   Alt/Option+E to inspect approval details",
      ];
    } else {
      const hint = app.mode === "working" ? "Enter to steer · Ctrl+Enter to queue" : "";
      const text = app.input !== "" ? app.input : hint;
      bottom = [
        ...(app.mode === "working"
          ? [` ${SPINNER[app.spinnerFrame % SPINNER.length]} Thinking...  (Press ESC to stop)`, ""]
          : []),
        ` ${"Auto (Off) · all actions require approval".padEnd(cols - 12)}Mock Model`,
        `╭${"─".repeat(inner)}╮`,
        box(` > ${text}`),
        `╰${"─".repeat(inner)}╯`,
        app.notice !== "" ? app.notice : "? for help",
      ];
      cursor = { row: rows - 2, col: Math.min(cols, app.input.length + 5) };
    }
    const header = [
      "",
      `   v${VERSION} - Airgap`,
      "",
      "                                Skills (…)  MCPs (0) ✗  AGENTS.md ✗",
      "",
    ];
    const body = [...header, ...app.items.flatMap((item, i, all) => this.itemLines(item, cols, all, i))];
    const room = Math.max(0, rows - bottom.length);
    const top = body.slice(-room);
    while (top.length < room) top.push("");
    drawFullScreen([...top, ...bottom], rows, cursor);
    const title = this.sessionTitle === "" ? "⛬ New Session" : `⛬ ${this.sessionTitle}`;
    if (title !== this.title) {
      setTitle(title);
      this.title = title;
    }
  }
}

/** Runs the Factory droid stand-in in the current terminal. */
export function runDroid() {
  process.title = "droid";
  new StandIn(new DroidAdapter()).start();
}
