// opencode stand-in: the alternate-screen TUI (`┃` input box, `esc interrupt`, `△ Permission
// required`, `▣  Build · <model> · 1.8s`) and the SQLite state of docs/status.md
// ($XDG_DATA_HOME/opencode/opencode.db, WAL). See README.md.
import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { StandIn } from "./stand-in.mjs";
import { drawFullScreen, ESC, screenSize, wrap } from "./terminal.mjs";

const MODEL = "mock-model";
/** How the TUI names the model in its footer lines. */
const MODEL_NAME = "Mock model";
const PROVIDER = "mock";

/** opencode 1.18's tables and indexes (those its own queries and StarAgent's readers use). */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS session (id TEXT PRIMARY KEY, project_id TEXT NOT NULL, parent_id TEXT, slug TEXT,
  directory TEXT NOT NULL, title TEXT, version TEXT, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL,
  time_compacting INTEGER, time_archived INTEGER);
CREATE TABLE IF NOT EXISTS message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, time_created INTEGER NOT NULL,
  time_updated INTEGER NOT NULL, data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL,
  time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS message_session_time_created_id_idx ON message (session_id, time_created, id);
CREATE INDEX IF NOT EXISTS part_message_id_id_idx ON part (message_id, id);
CREATE INDEX IF NOT EXISTS part_session_idx ON part (session_id);
`;

let counter = 0;
/** Ids that sort by creation time, like opencode's (`ses_`, `msg_`, `prt_` + time + counter + random). */
function newId(prefix) {
  counter++;
  const time = (Date.now() * 0x1000 + (counter % 0x1000)).toString(16).padStart(12, "0");
  return `${prefix}_${time}${randomBytes(7).toString("hex")}`;
}

/** opencode's own names; a CLI built on its core (Kilo CLI) passes its own. */
const OPENCODE = {
  name: "opencode",
  version: "1.18.33",
  agent: "build",
  /** The permission dialog's `# …` line for a shell command. */
  shellHeader: () => "Shell command",
};

/** The TUI and database of opencode, or of a CLI on its core (`flavour`). */
export class OpencodeAdapter {
  constructor(flavour = OPENCODE) {
    this.flavour = flavour;
    this.version = process.env.STANDIN_VERSION || flavour.version;
    this.agentLabel = flavour.agent.charAt(0).toUpperCase() + flavour.agent.slice(1);
    const dataHome = process.env.XDG_DATA_HOME || join(homedir(), ".local", "share");
    const dir = join(dataHome, flavour.name);
    mkdirSync(dir, { recursive: true });
    this.db = new Database(join(dir, `${flavour.name}.db`));
    this.db.pragma("journal_mode = WAL");
    this.db.exec(SCHEMA);
    this.sessionId = undefined;
    // `opencode --session <id>` (`-s`) goes on with that session (an id it does not have starts a new one).
    const at = process.argv.findIndex((a) => a === "--session" || a === "-s");
    const named = at >= 0 ? process.argv[at + 1] : undefined;
    if (named && this.db.prepare("SELECT id FROM session WHERE id = ?").get(named)) this.sessionId = named;
  }

  // --- native state -------------------------------------------------------------------------

  insertMessage(data) {
    const id = newId("msg");
    const now = Date.now();
    this.db
      .prepare("INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?)")
      .run(id, this.sessionId, now, now, JSON.stringify(data));
    return { id, data };
  }

  updateMessage(message) {
    this.db
      .prepare("UPDATE message SET data = ?, time_updated = ? WHERE id = ?")
      .run(JSON.stringify(message.data), Date.now(), message.id);
    this.db.prepare("UPDATE session SET time_updated = ? WHERE id = ?").run(Date.now(), this.sessionId);
  }

  insertPart(messageId, data) {
    const id = newId("prt");
    const now = Date.now();
    this.db
      .prepare(
        "INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?, ?)",
      )
      .run(id, messageId, this.sessionId, now, now, JSON.stringify(data));
    return { id, data };
  }

  updatePart(part) {
    this.db
      .prepare("UPDATE part SET data = ?, time_updated = ? WHERE id = ?")
      .run(JSON.stringify(part.data), Date.now(), part.id);
  }

  openAssistant() {
    const now = Date.now();
    this.assistant = this.insertMessage({
      role: "assistant",
      parentID: this.userMessage.id,
      time: { created: now },
      modelID: MODEL,
      providerID: PROVIDER,
      mode: this.flavour.agent,
      agent: this.flavour.agent,
      path: { cwd: process.cwd(), root: process.cwd() },
      cost: 0,
      tokens: { input: 0, output: 0, reasoning: 0, cache: { read: 0, write: 0 } },
    });
    this.insertPart(this.assistant.id, { type: "step-start" });
  }

  closeAssistant(finish, error) {
    const data = this.assistant.data;
    data.time.completed = Date.now();
    if (finish) data.finish = finish;
    if (error) data.error = error;
    this.updateMessage(this.assistant);
    if (finish) {
      this.insertPart(this.assistant.id, {
        type: "step-finish",
        reason: finish,
        cost: 0,
        tokens: { input: 1200, output: 40, reasoning: 0, cache: { read: 0, write: 0 } },
      });
    }
  }

  started() {
    process.stdout.write(`${ESC}[?1049h`);
  }

  turnStarted(_app, prompt) {
    const now = Date.now();
    if (!this.sessionId) {
      this.sessionId = newId("ses");
      this.db
        .prepare(
          "INSERT INTO session (id, project_id, parent_id, slug, directory, title, version, time_created, time_updated) VALUES (?, ?, NULL, ?, ?, ?, ?, ?, ?)",
        )
        .run(this.sessionId, "global", "stand-in", process.cwd(), prompt.slice(0, 40), this.version, now, now);
    }
    this.userMessage = this.insertMessage({
      role: "user",
      time: { created: now },
      agent: this.flavour.agent,
      model: { providerID: PROVIDER, modelID: MODEL },
    });
    this.insertPart(this.userMessage.id, { type: "text", text: prompt });
    this.openAssistant();
  }

  toolCall(_app, call) {
    this.toolPart = this.insertPart(this.assistant.id, {
      type: "tool",
      callID: `call_${randomBytes(8).toString("hex")}`,
      tool: call.tool === "Bash" ? "bash" : "read",
      state: {
        status: "running",
        input:
          call.tool === "Bash" ? { command: call.command, description: call.description } : { filePath: call.command },
        title: call.command,
        time: { start: Date.now() },
      },
    });
  }

  approvalWaiting() {
    // opencode keeps the permission request in memory only (docs/status.md): the tool stays "running".
  }

  toolResult(_app, _call, output) {
    const state = this.toolPart.data.state;
    this.toolPart.data.state = {
      ...state,
      status: "completed",
      output,
      metadata: {},
      time: { start: state.time.start, end: Date.now() },
    };
    this.updatePart(this.toolPart);
    this.toolPart = undefined;
    this.closeAssistant("tool-calls");
    this.openAssistant();
  }

  reply(_app, text) {
    const now = Date.now();
    this.insertPart(this.assistant.id, { type: "text", text, time: { start: now, end: now } });
  }

  turnCompleted() {
    this.closeAssistant("stop");
  }

  turnInterrupted() {
    if (this.toolPart) {
      const state = this.toolPart.data.state;
      this.toolPart.data.state = {
        ...state,
        status: "error",
        error: "Tool execution aborted",
        time: { start: state.time.start, end: Date.now() },
      };
      this.updatePart(this.toolPart);
      this.toolPart = undefined;
    }
    this.closeAssistant(undefined, { name: "MessageAbortedError", data: { message: "The operation was aborted." } });
  }

  apiError(_app, message) {
    this.closeAssistant(undefined, { name: "APIError", data: { message, isRetryable: false } });
  }

  exiting() {
    process.stdout.write(`${ESC}[?2004l${ESC}[?1049l`);
    this.db.close();
  }

  // --- screen -------------------------------------------------------------------------------

  itemLines(item, cols) {
    switch (item.kind) {
      case "user":
        return ["", "┃", ...wrap(item.text, cols, "┃  ", "┃  "), "┃"];
      case "assistant":
        return ["", ...wrap(item.text, cols, "   ", "   ")];
      case "tool":
        return ["", item.text.tool === "Bash" ? `   $ ${item.text.command}` : `   → Read ${item.text.command}`];
      case "result":
        return wrap(item.text.split("\n")[0], cols, "     ", "     ");
      case "interrupted":
        return ["", `   ▣  ${this.agentLabel} · ${MODEL_NAME}`];
      case "error":
        return ["", ...wrap(item.text, cols, "┃  Error: ", "┃  ")];
      case "done":
        return ["", `   ▣  ${this.agentLabel} · ${MODEL_NAME} · ${((item.ms ?? 0) / 1000).toFixed(1)}s`];
      default:
        return [];
    }
  }

  render(app) {
    const { cols, rows } = screenSize();
    let bottom;
    let cursor;
    if (app.mode === "approval" && this.rejectBox) {
      bottom = [
        "",
        "┃  △ Reject permission",
        "┃",
        `┃  ${this.rejectBox}`,
        "┃",
        "┃",
        `┃${" ".repeat(60)}enter confirm  esc cancel`,
      ];
    } else if (app.mode === "approval") {
      const call = app.turn?.pending ?? { command: "", description: "" };
      bottom = [
        "",
        "┃  △ Permission required",
        `┃    # ${this.flavour.shellHeader(call)}`,
        "┃",
        `┃  $ ${call.command}`,
        "┃",
        "┃   Allow once   Allow always   Reject            ctrl+f fullscreen  ⇆ select  enter confirm",
      ];
    } else {
      const input =
        app.input === ""
          ? ['  ┃  Ask anything... "Fix a TODO in the codebase"']
          : wrap(app.input, cols, "  ┃  ", "  ┃  ");
      const footer =
        app.notice !== ""
          ? `  ${app.notice}`
          : app.mode === "working"
            ? `  ${"⬝".repeat(app.spinnerFrame % 8)}■■■  esc interrupt`
            : `  ${process.cwd()}                                  ctrl+p commands`;
      bottom = [
        "",
        ...input,
        "  ┃",
        `  ┃  ${this.agentLabel}  ${MODEL} ${PROVIDER}`,
        "  ╹▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀",
        footer,
      ];
      const last = input[input.length - 1];
      cursor = { row: rows - 4, col: Math.min(cols, app.input === "" ? 6 : last.length + 1) };
    }
    const header = ["", `  ${this.flavour.name} ${this.version}`];
    const body = [...header, ...app.items.flatMap((item) => this.itemLines(item, cols))];
    const room = Math.max(0, rows - bottom.length);
    const top = body.slice(-room);
    while (top.length < room) top.push("");
    drawFullScreen([...top, ...bottom], rows, cursor);
  }
}

/** Runs the opencode stand-in in the current terminal. */
export function runOpencode() {
  process.title = "opencode";
  new StandIn(new OpencodeAdapter()).start();
}
