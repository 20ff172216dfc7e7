// Qwen Code stand-in: the TUI of 0.24 (`  > prompt`, `  ◆︎ reply`, `  ✓ Shell …`, the approval dialog,
// the titles `Qwen - dir` / `◐︎ Qwen - dir` / `✳︎ Qwen - dir`) and its session log
// ($QWEN_HOME or ~/.qwen /projects/<cwd>/chats/<sessionId>.jsonl, with <sessionId>.runtime.json naming
// the pid), which has no end-of-turn record. See README.md.
import { randomUUID } from "node:crypto";
import { appendFileSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { basename, join } from "node:path";
import { StandIn } from "./stand-in.mjs";
import { drawFullScreen, screenSize, setTitle, wrap } from "./terminal.mjs";

const VERSION = process.env.STANDIN_VERSION || "0.24.4";
const MODEL = "mock-model";
/** The mark Qwen Code prints after some symbols (U+FE0E, text presentation). */
const TEXT = "\uFE0E";
/** Token figures of each response, as the real CLI records them. */
const USAGE = {
  promptTokenCount: 1200,
  candidatesTokenCount: 40,
  thoughtsTokenCount: 0,
  totalTokenCount: 1240,
  cachedContentTokenCount: 0,
};
const SPINNER = ["◐", "◓", "◑", "◒"];

class QwenAdapter {
  constructor() {
    const home = process.env.QWEN_HOME || join(homedir(), ".qwen");
    const cwd = process.cwd();
    this.chats = join(home, "projects", cwd.replace(/[^a-zA-Z0-9]/g, "-"), "chats");
    mkdirSync(this.chats, { recursive: true });
    this.sessionId = randomUUID();
    this.path = join(this.chats, `${this.sessionId}.jsonl`);
    this.runtime = join(this.chats, `${this.sessionId}.runtime.json`);
    this.parent = null;
    this.title = "";
    this.callCount = 0;
    this.returnsUnansweredPrompt = true;
  }

  // --- native state -------------------------------------------------------------------------

  write(type, fields) {
    const uuid = randomUUID();
    const record = {
      uuid,
      parentUuid: this.parent,
      sessionId: this.sessionId,
      timestamp: new Date().toISOString(),
      type,
      cwd: process.cwd(),
      version: VERSION,
      ...fields,
    };
    appendFileSync(this.path, `${JSON.stringify(record)}\n`);
    this.parent = uuid;
  }

  telemetry(uiEvent) {
    this.write("system", { subtype: "ui_telemetry", systemPayload: { uiEvent } });
  }

  started() {
    writeFileSync(
      this.runtime,
      JSON.stringify({
        schema_version: 1,
        pid: process.pid,
        session_id: this.sessionId,
        work_dir: process.cwd(),
        qwen_version: VERSION,
      }),
    );
  }

  turnStarted(_app, prompt) {
    this.write("user", { provenance: "real_user", message: { role: "user", parts: [{ text: prompt }] } });
  }

  toolCall(_app, call) {
    this.callCount++;
    this.call = {
      id: `call_standin_${this.callCount}`,
      name: call.tool === "Bash" ? "run_shell_command" : "read_file",
      args:
        call.tool === "Bash" ? { command: call.command, description: call.description } : { file_path: call.command },
    };
    this.telemetry({ "event.name": "qwen-code.api_response" });
    this.write("assistant", {
      provenance: "assistant_output",
      model: MODEL,
      message: { role: "model", parts: [{ functionCall: this.call }] },
      usageMetadata: USAGE,
      contextWindowSize: 200000,
    });
  }

  approvalWaiting() {
    // Qwen Code writes nothing while its dialog waits: the call above has no result yet.
  }

  resolveCall(status, decision, response) {
    const call = this.call;
    if (!call) return;
    this.telemetry({
      "event.name": "qwen-code.tool_call",
      call_id: call.id,
      function_name: call.name,
      status,
      decision,
    });
    this.write("tool_result", {
      provenance: "tool_result",
      message: { role: "user", parts: [{ functionResponse: { id: call.id, name: call.name, response } }] },
    });
    this.call = undefined;
  }

  toolResult(_app, _call, output) {
    this.resolveCall("success", "accept", { output });
  }

  reply(_app, text) {
    this.telemetry({ "event.name": "qwen-code.api_response" });
    this.write("assistant", {
      provenance: "assistant_output",
      model: MODEL,
      message: { role: "model", parts: [{ text }] },
      usageMetadata: USAGE,
      contextWindowSize: 200000,
    });
  }

  turnCompleted() {
    // Qwen Code writes no end-of-turn record: the reply above ends the turn.
  }

  turnInterrupted(app, pending, answered) {
    if (pending) {
      this.resolveCall("cancelled", "reject", { error: "[Operation Cancelled] Reason: User did not allow tool call" });
    }
    // A turn cancelled before its reply writes nothing; its prompt goes back into the input box.
    if (!answered) app.notice = "Press Esc again to clear.";
  }

  apiError() {
    // What 0.24 logs for a failed request is not recorded here: the error is only shown.
  }

  exiting() {
    rmSync(this.runtime, { force: true });
    setTitle("");
  }

  // --- screen -------------------------------------------------------------------------------

  itemLines(item, cols) {
    switch (item.kind) {
      case "user":
        return wrap(item.text, cols, "  > ", "    ");
      case "assistant":
        return wrap(item.text, cols, `  ◆${TEXT} `, "    ");
      case "tool": {
        const name = item.text.tool === "Bash" ? "Shell" : "ReadFile";
        const mark = item.done ? "✓" : item.cancelled ? "-" : "..";
        return [`  ${mark}${mark === ".." ? "" : " "}${name} ${item.text.command} (${item.text.description})`];
      }
      case "result":
        return [`    ${item.text.split("\n")[0]}`];
      case "interrupted":
        return [`  ●${TEXT} Request cancelled.`];
      case "error":
        return wrap(`✕ [API Error: ${item.text}]`, cols, "  ", "    ");
      default:
        return [];
    }
  }

  render(app) {
    const { cols, rows } = screenSize();
    for (let i = 0; i < app.items.length; i++) {
      const item = app.items[i];
      if (item.kind !== "tool") continue;
      const next = app.items[i + 1];
      item.done = next?.kind === "result";
      item.cancelled = !item.done && (next !== undefined || app.turn?.pending !== item.text);
    }
    const dir = basename(process.cwd());
    let bottom;
    let cursor;
    if (app.mode === "approval") {
      const call = app.turn?.pending ?? { command: "", description: "" };
      const program = call.command.split(" ")[0];
      const options = [
        "Yes, allow once",
        `Always allow run '${program} *' commands in this project`,
        "No, suggest changes (esc)",
      ];
      bottom = [
        `  ? Shell ${call.command} (${call.description}) ←`,
        "",
        `     ${call.command}`,
        "",
        `   Allow execution of: '${program}'?`,
        "",
        ...options.map((o, i) => `   ${i === app.selected ? "›" : " "} ${i + 1}. ${o}`),
        "",
        "  ⠏ Waiting for user confirmation...",
      ];
    } else {
      const input = app.input === "" ? [">   Type your message or @path/to/file"] : wrap(app.input, cols, "> ", "  ");
      const footer = app.notice !== "" ? `  ${app.notice}` : "  ⏸ Ask permissions (shift + tab to cycle)";
      bottom = [
        ...(app.mode === "working" ? [`  ⠧ Working on it... (${app.elapsedSeconds}s · esc to cancel)`] : []),
        "─".repeat(cols),
        ...input,
        "─".repeat(cols),
        `  ➜ ${dir} · ${MODEL}`,
        footer,
      ];
      cursor = { row: rows - 3, col: Math.min(cols, app.input === "" ? 5 : input[input.length - 1].length + 1) };
    }
    const header = ["", `  >_ Qwen Code (v${VERSION})`, ""];
    const body = [...header, ...app.items.flatMap((item) => this.itemLines(item, cols))];
    const room = Math.max(0, rows - bottom.length);
    const top = body.slice(-room);
    while (top.length < room) top.push("");
    drawFullScreen([...top, ...bottom], rows, cursor);
    const title =
      app.mode === "approval"
        ? `✳${TEXT} Qwen - ${dir}`
        : app.mode === "working"
          ? `${SPINNER[app.spinnerFrame % SPINNER.length]}${TEXT} Qwen - ${dir}`
          : `Qwen - ${dir}`;
    if (title !== this.title) {
      setTitle(title);
      this.title = title;
    }
  }
}

/** Runs the Qwen Code stand-in in the current terminal. */
export function runQwen() {
  process.title = "qwen";
  new StandIn(new QwenAdapter()).start();
}
