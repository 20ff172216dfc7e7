// pi stand-in: the TUI of 0.73 (prompts in a padded box, answers as plain text, ` $ command` tool
// boxes, ` Operation aborted`, ` ⠧ Working...` above the input box between two rules, the folder and
// footer under it, the permission gate's selection dialog, the title `π - <dir>`) and its session file
// ($PI_CODING_AGENT_DIR or ~/.pi/agent /sessions/--<cwd>--/<start time>_<id>.jsonl), written only once
// the first reply arrived, as the real CLI does. See README.md.
import { randomUUID } from "node:crypto";
import { appendFileSync, mkdirSync } from "node:fs";
import { homedir } from "node:os";
import { basename, join } from "node:path";
import { StandIn } from "./stand-in.mjs";
import { drawFullScreen, screenSize, setTitle, wrap } from "./terminal.mjs";

const VERSION = process.env.STANDIN_VERSION || "0.73.1";
const MODEL = "mock-model";
const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
/** Token figures of each request, as the real CLI records them. */
const USAGE = { input: 1200, output: 40, cacheRead: 0, cacheWrite: 0, totalTokens: 1240 };

class PiAdapter {
  constructor() {
    const agentDir = process.env.PI_CODING_AGENT_DIR || join(homedir(), ".pi", "agent");
    const cwd = process.cwd();
    this.dir = join(agentDir, "sessions", `--${cwd.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`);
    this.sessionId = randomUUID();
    const started = new Date().toISOString();
    this.path = join(this.dir, `${started.replace(/[:.]/g, "-")}_${this.sessionId}.jsonl`);
    this.pending = [];
    this.flushed = false;
    this.parent = null;
    this.title = "";
    this.callCount = 0;
    /** pi's permission gate offers Yes and No. */
    this.approvalChoices = ["allow", "reject"];
    this.entry({ type: "session", version: 3, id: this.sessionId, timestamp: started, cwd });
    this.record("model_change", { provider: "mock", modelId: MODEL });
    this.record("thinking_level_change", { thinkingLevel: "off" });
  }

  // --- native state -------------------------------------------------------------------------

  /** Appends a line, or keeps it until the first reply (pi writes its file only from then on). */
  entry(line) {
    this.pending.push(`${JSON.stringify(line)}\n`);
    if (!this.flushed) return;
    appendFileSync(this.path, this.pending.join(""));
    this.pending = [];
  }

  record(type, fields) {
    const id = randomUUID().slice(0, 8);
    this.entry({ type, id, parentId: this.parent, timestamp: new Date().toISOString(), ...fields });
    this.parent = id;
  }

  message(message) {
    this.record("message", { message: { ...message, timestamp: Date.now() } });
  }

  assistant(content, stopReason, extra = {}) {
    if (!this.flushed) {
      mkdirSync(this.dir, { recursive: true });
      this.flushed = true;
    }
    this.message({
      role: "assistant",
      content,
      api: "openai-completions",
      provider: "mock",
      model: MODEL,
      usage: USAGE,
      stopReason,
      ...extra,
    });
  }

  started() {}

  turnStarted(_app, prompt) {
    this.message({ role: "user", content: [{ type: "text", text: prompt }] });
  }

  toolCall(_app, call) {
    this.callCount++;
    const name = call.tool === "Bash" ? "bash" : "read";
    const args =
      call.tool === "Bash" ? { command: call.command, description: call.description } : { path: call.command };
    this.call = { id: `call_standin_${this.callCount}`, name };
    this.assistant([{ type: "toolCall", id: this.call.id, name, arguments: args }], "toolUse");
  }

  approvalWaiting() {
    // pi writes nothing while an extension's dialog waits: the call above has no result yet.
  }

  toolResult(_app, _call, output, isError) {
    if (!this.call) return;
    this.message({
      role: "toolResult",
      toolCallId: this.call.id,
      toolName: this.call.name,
      content: [{ type: "text", text: output }],
      isError: Boolean(isError),
    });
    this.call = undefined;
  }

  reply(_app, text) {
    this.assistant([{ type: "text", text }], "stop");
  }

  turnCompleted() {
    // The reply's stopReason "stop" above ends the turn.
  }

  turnInterrupted(_app, pending) {
    if (pending && this.call) this.toolResult(_app, pending, "Blocked by user", true);
    this.assistant([], "aborted", { errorMessage: "Operation aborted" });
  }

  apiError(_app, message) {
    this.assistant([], "error", { errorMessage: message });
  }

  exiting() {
    setTitle("");
  }

  // --- screen -------------------------------------------------------------------------------

  /** One part of the conversation: plain text after a blank line, a box padded by one more. */
  itemLines(item, cols) {
    const box = (lines) => ["", "", ...lines, ""];
    switch (item.kind) {
      case "user":
        return box(wrap(item.text, cols, " ", " "));
      case "assistant":
        return ["", ...wrap(item.text, cols, " ", " ")];
      case "tool":
        return box([` $ ${item.text.command}`]);
      case "result":
        return [` ${item.text.split("\n")[0]}`, "", " Took 0.1s", ""];
      case "interrupted":
        return ["", " Operation aborted"];
      case "error":
        return ["", ...wrap(`Error: ${item.text}`, cols, " ", " ")];
      default:
        return [];
    }
  }

  render(app) {
    const { cols, rows } = screenSize();
    const rule = "─".repeat(cols);
    const dir = process.cwd();
    let middle;
    let cursor;
    if (app.mode === "approval") {
      const call = app.turn?.pending ?? { command: "" };
      const options = ["Yes", "No"].map((o, i) => ` ${i === app.selected ? "→" : " "} ${o}`);
      middle = [
        "",
        " ⚠️ Dangerous command:",
        "",
        `   ${call.command}`,
        "",
        " Allow?",
        "",
        ...options,
        "",
        " ↑↓ navigate  enter select  escape/ctrl+c cancel",
        "",
      ];
    } else {
      middle = [...wrap(app.input, cols, "", "")];
      cursor = { row: rows - 3, col: Math.min(cols, app.input.length + 1) };
    }
    const working = app.mode === "working" || app.mode === "approval";
    const bottom = [
      ...(working ? ["", ` ${SPINNER[app.spinnerFrame % SPINNER.length]} Working...`] : []),
      "",
      rule,
      ...middle,
      rule,
      dir,
      `${"0.0%/128k (auto)".padEnd(cols - MODEL.length)}${MODEL}`,
    ];
    const header = [
      ` pi v${VERSION}`,
      " escape interrupt · ctrl+c/ctrl+d clear/exit · / commands · ! bash · ctrl+o more",
      "",
    ];
    const body = [...header, ...app.items.flatMap((item) => this.itemLines(item, cols))];
    const room = Math.max(0, rows - bottom.length);
    const top = body.slice(-room);
    while (top.length < room) top.unshift("");
    drawFullScreen([...top, ...bottom], rows, cursor);
    const title = `π - ${basename(dir)}`;
    if (title !== this.title) {
      setTitle(title);
      this.title = title;
    }
  }
}

/** Runs the pi stand-in in the current terminal. */
export function runPi() {
  process.title = "pi";
  new StandIn(new PiAdapter()).start();
}
