// Gemini CLI stand-in: the TUI of 0.61 (` > prompt`, `✦ reply`, tool boxes, `ℹ Request cancelled.`,
// the approval box, the titles `◇  Ready` / `✦  Working…` / `✋  Action Required`) and its session file
// ($GEMINI_CLI_HOME or $HOME /.gemini/tmp/<project>/chats/session-*.jsonl), which has no end-of-turn
// record. See README.md.
import { randomUUID } from "node:crypto";
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { basename, join } from "node:path";
import { StandIn } from "./stand-in.mjs";
import { drawFullScreen, screenSize, setTitle, wrap } from "./terminal.mjs";

const VERSION = process.env.STANDIN_VERSION || "0.61.0";
const MODEL = "gemini-2.5-flash";
/** The approval's options, in APPROVAL_RESULTS order (allow, always, reject). */
const APPROVAL_OPTIONS = ["Allow once", "Allow for this session", "No, suggest changes (esc)"];
/** Token figures of each reply, as the real CLI records them. */
const TOKENS = { input: 1200, output: 40, cached: 0, thoughts: 0, tool: 0, total: 1240 };

/** The project's short name as Gemini CLI derives it from the folder's name. */
function slug(dir) {
  return (
    basename(dir)
      .toLowerCase()
      .replace(/[^a-z0-9]/g, "-")
      .replace(/-+/g, "-")
      .replace(/^-|-$/g, "") || "project"
  );
}

function pad(n) {
  return String(n).padStart(2, "0");
}

class GeminiAdapter {
  constructor() {
    const gemini = join(process.env.GEMINI_CLI_HOME || homedir(), ".gemini");
    const cwd = process.cwd();
    const project = slug(cwd);
    const projectDir = join(gemini, "tmp", project);
    mkdirSync(join(projectDir, "chats"), { recursive: true });
    writeFileSync(join(projectDir, ".project_root"), cwd);
    const registry = join(gemini, "projects.json");
    let projects = {};
    try {
      projects = JSON.parse(readFileSync(registry, "utf8")).projects ?? {};
    } catch {
      projects = {};
    }
    writeFileSync(registry, JSON.stringify({ projects: { ...projects, [cwd]: project } }, null, 2));
    this.sessionId = randomUUID();
    const now = new Date();
    const stamp = `${now.getFullYear()}-${pad(now.getMonth() + 1)}-${pad(now.getDate())}T${pad(now.getHours())}-${pad(now.getMinutes())}`;
    this.path = join(projectDir, "chats", `session-${stamp}-${this.sessionId.slice(0, 8)}.jsonl`);
    this.title = "";
    this.callCount = 0;
  }

  // --- native state -------------------------------------------------------------------------

  write(record) {
    appendFileSync(this.path, `${JSON.stringify(record)}\n`);
    appendFileSync(this.path, `${JSON.stringify({ $set: { lastUpdated: new Date().toISOString() } })}\n`);
  }

  record(type, fields) {
    return { id: randomUUID(), timestamp: new Date().toISOString(), type, ...fields };
  }

  started() {
    const now = new Date().toISOString();
    appendFileSync(
      this.path,
      `${JSON.stringify({ sessionId: this.sessionId, projectHash: "0".repeat(64), startTime: now, lastUpdated: now, kind: "main" })}\n`,
    );
    const context = {
      id: randomUUID(),
      timestamp: now,
      type: "user",
      content: [{ text: "<session_context>\nThis is the Gemini CLI stand-in.\n</session_context>" }],
    };
    appendFileSync(this.path, `${JSON.stringify({ $set: { messages: [context] } })}\n`);
  }

  turnStarted(_app, prompt) {
    this.write(this.record("user", { content: [{ text: prompt }] }));
  }

  toolCall(_app, call) {
    // The model's response was only the call: the reply is written at once, its call only once answered.
    this.callCount++;
    this.pendingReply = this.record("gemini", { content: "", thoughts: [], tokens: TOKENS, model: MODEL });
    this.call = {
      id: `${call.tool === "Bash" ? "run_shell_command" : "read_file"}__call_${this.callCount}`,
      name: call.tool === "Bash" ? "run_shell_command" : "read_file",
      args:
        call.tool === "Bash" ? { command: call.command, description: call.description } : { file_path: call.command },
      displayName: call.tool === "Bash" ? "Shell" : "ReadFile",
      description: call.command,
    };
    this.write(this.pendingReply);
  }

  approvalWaiting() {
    // Gemini CLI writes nothing while its approval dialog is shown (docs/status.md).
  }

  resolveCall(status, response) {
    const call = this.call;
    if (!call || !this.pendingReply) return;
    const functionResponse = { id: call.id, name: call.name, response };
    this.write({
      ...this.pendingReply,
      toolCalls: [{ ...call, result: [{ functionResponse }], status, timestamp: new Date().toISOString() }],
    });
    this.write(this.record("user", { content: [{ functionResponse }] }));
    this.call = undefined;
    this.pendingReply = undefined;
  }

  toolResult(_app, _call, output) {
    this.resolveCall("success", { output });
  }

  reply(_app, text) {
    this.write(this.record("gemini", { content: text, thoughts: [], tokens: TOKENS, model: MODEL }));
  }

  turnCompleted() {
    // Gemini CLI writes no end-of-turn record: the reply above ends the turn.
  }

  turnInterrupted() {
    this.write(this.record("info", { content: "Request cancelled." }));
    this.resolveCall("cancelled", { error: "[Operation Cancelled] Reason: Operation cancelled by user" });
  }

  apiError(_app, message) {
    // What 0.61 logs for a failed request is not recorded here: the error is only shown.
    this.lastError = message;
  }

  exiting() {
    setTitle("");
  }

  // --- screen -------------------------------------------------------------------------------

  itemLines(item, cols) {
    switch (item.kind) {
      case "user":
        return ["", ...wrap(item.text, cols, " > ", "   ")];
      case "assistant":
        return wrap(item.text, cols, "✦ ", "  ");
      case "tool": {
        const name = item.text.tool === "Bash" ? "Shell" : "ReadFile";
        const mark = item.done ? "✓" : item.cancelled ? "-" : "⊷";
        return box(
          [`${mark}  ${name} ${item.text.command}`, ...(item.output ? [item.output.split("\n")[0]] : [])],
          cols,
        );
      }
      case "interrupted":
        return ["ℹ Request cancelled."];
      case "error":
        return wrap(`✕ [API Error: ${item.text}]`, cols, "", "  ");
      default:
        return [];
    }
  }

  render(app) {
    const { cols, rows } = screenSize();
    // The tool items show their state: done once a result follows, refused or stopped otherwise.
    for (let i = 0; i < app.items.length; i++) {
      const item = app.items[i];
      if (item.kind !== "tool") continue;
      const next = app.items[i + 1];
      item.done = next?.kind === "result";
      item.output = item.done ? next.text : undefined;
      item.cancelled = !item.done && (next !== undefined || app.turn?.pending !== item.text);
    }
    const dir = basename(process.cwd());
    let bottom;
    let cursor;
    if (app.mode === "approval") {
      const call = app.turn?.pending ?? { command: "" };
      bottom = box(
        [
          `? Shell  ${call.command}`,
          ...box([call.command], cols - 4),
          "Allow execution of [Shell]?",
          "",
          ...APPROVAL_OPTIONS.map((o, i) => `${i === app.selected ? "●" : " "} ${i + 1}. ${o}`),
        ],
        cols,
      );
    } else {
      const status =
        app.mode === "working"
          ? `${` ⠹ Thinking... (esc to cancel, ${app.elapsedSeconds}s)`.padEnd(cols - 16)}? for shortcuts`
          : "? for shortcuts".padStart(cols);
      const input =
        app.input === "" ? [" >   Type your message or @path/to/file"] : wrap(app.input, cols, " > ", "   ");
      bottom = [
        status,
        "─".repeat(cols),
        " Shift+Tab to accept edits",
        ...input,
        " workspace (/directory)                    sandbox                    /model",
        ` ${process.cwd()}   no sandbox   ${MODEL}`,
      ];
      cursor = { row: rows - 2, col: Math.min(cols, app.input === "" ? 5 : input[input.length - 1].length + 1) };
    }
    const header = ["", ` Gemini CLI v${VERSION}`, ""];
    const body = [...header, ...app.items.flatMap((item) => this.itemLines(item, cols))];
    const room = Math.max(0, rows - bottom.length);
    const top = body.slice(-room);
    while (top.length < room) top.push("");
    drawFullScreen([...top, ...bottom], rows, cursor);
    const title =
      app.mode === "approval"
        ? `✋  Action Required (${dir})`
        : app.mode === "working"
          ? `✦  Working… (${dir})`
          : `◇  Ready (${dir})`;
    if (title !== this.title) {
      setTitle(title);
      this.title = title;
    }
  }
}

/** `lines` in a rounded box `width` wide. */
function box(lines, width) {
  const inner = Math.max(4, width - 4);
  return [
    `╭${"─".repeat(inner + 2)}╮`,
    ...lines.map((l) => `│ ${l.slice(0, inner).padEnd(inner)} │`),
    `╰${"─".repeat(inner + 2)}╯`,
  ];
}

/** Runs the Gemini CLI stand-in in the current terminal. */
export function runGemini() {
  process.title = "gemini";
  new StandIn(new GeminiAdapter()).start();
}
