// GitHub Copilot CLI stand-in: the TUI of 1.0.102 (` ❯ prompt`, ` ● reply`, ` $ Shell …`, the approval
// box, the `◎ Working` footer, the titles `GitHub Copilot` / `<session name> - GitHub Copilot`) and its
// session log ($COPILOT_HOME or ~/.copilot /session-state/<sessionId>/events.jsonl, with workspace.yaml
// naming the folder and inuse.<pid>.lock the process). Escape before any output rewinds the turn out of
// the log (then a usage checkpoint names the rewind) and puts the prompt back into the input box, as
// the real CLI's Escape Escape does. See README.md.
import { randomUUID } from "node:crypto";
import { appendFileSync, mkdirSync, rmSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { APPROVAL_RESULTS, StandIn } from "./stand-in.mjs";
import { drawFullScreen, screenSize, setTitle, wrap } from "./terminal.mjs";

const VERSION = process.env.STANDIN_VERSION || "1.0.102";
const MODEL = "mock-model";
const SPINNER = ["◎", "◉", "○"];
/** The words of the approval's options, in APPROVAL_RESULTS order. */
const APPROVAL_WORDS = {
  allow: "Yes",
  always: "Yes, and don't ask again for `rm` in this directory",
  reject: "No, and tell Copilot what to do differently (Esc to stop)",
};

class CopilotAdapter {
  constructor() {
    const home = process.env.COPILOT_HOME || join(homedir(), ".copilot");
    this.sessionId = randomUUID();
    this.dir = join(home, "session-state", this.sessionId);
    this.path = join(this.dir, "events.jsonl");
    this.lock = join(this.dir, `inuse.${process.pid}.lock`);
    this.parent = null;
    this.title = "";
    this.name = "";
    this.callCount = 0;
    this.turnId = 0;
    this.returnsUnansweredPrompt = true;
  }

  // --- native state -------------------------------------------------------------------------

  write(type, data) {
    const id = randomUUID();
    const record = { type, data, id, timestamp: new Date().toISOString(), parentId: this.parent };
    appendFileSync(this.path, `${JSON.stringify(record)}\n`);
    this.parent = id;
  }

  started() {
    mkdirSync(this.dir, { recursive: true });
    const now = new Date().toISOString();
    writeFileSync(
      join(this.dir, "workspace.yaml"),
      `id: ${this.sessionId}\ncwd: ${process.cwd()}\nclient_name: github/cli\ncreated_at: ${now}\nupdated_at: ${now}\n`,
    );
    writeFileSync(this.lock, `${process.pid}`);
    this.write("session.start", {
      sessionId: this.sessionId,
      version: 1,
      producer: "copilot-agent",
      copilotVersion: VERSION,
      startTime: now,
      selectedModel: MODEL,
      context: { cwd: process.cwd() },
    });
  }

  turnStarted(_app, prompt) {
    if (this.name === "") this.name = prompt;
    this.rewindTo = statSync(this.path).size;
    this.rewindParent = this.parent;
    this.turnId = 0;
    this.write("user.message", {
      content: prompt,
      transformedContent: prompt,
      messageId: randomUUID(),
      delivery: "idle",
    });
    this.write("assistant.turn_start", { turnId: `${this.turnId}` });
  }

  toolCall(_app, call) {
    this.callCount++;
    const name = call.tool === "Bash" ? "bash" : "view";
    const args =
      call.tool === "Bash" ? { command: call.command, description: call.description } : { path: call.command };
    this.call = { toolCallId: `call_standin_${this.callCount}`, name, arguments: args };
    this.asked = false;
    this.write("assistant.message", {
      messageId: randomUUID(),
      model: MODEL,
      content: "",
      toolRequests: [{ ...this.call, type: "function", intentionSummary: call.description }],
      turnId: `${this.turnId}`,
    });
    this.write("tool.execution_start", { toolCallId: this.call.toolCallId, toolName: name, arguments: args });
  }

  approvalWaiting(_app, call, waiting) {
    if (!waiting || !this.call) return;
    this.asked = true;
    this.write("permission.requested", {
      requestId: `request_${this.callCount}`,
      permissionRequest: { kind: "shell", toolCallId: this.call.toolCallId, fullCommandText: call.command },
    });
  }

  toolResult(_app, _call, output) {
    const call = this.call;
    if (!call) return;
    if (this.asked) {
      this.write("permission.completed", {
        requestId: `request_${this.callCount}`,
        toolCallId: call.toolCallId,
        result: { kind: "approved" },
      });
    }
    this.write("tool.execution_complete", { toolCallId: call.toolCallId, success: true, result: { content: output } });
    this.write("assistant.turn_end", { turnId: `${this.turnId}` });
    this.turnId++;
    this.write("assistant.turn_start", { turnId: `${this.turnId}` });
    this.call = undefined;
  }

  reply(_app, text) {
    this.write("assistant.message", { messageId: randomUUID(), model: MODEL, content: text, toolRequests: [] });
  }

  turnCompleted() {
    this.write("assistant.turn_end", { turnId: `${this.turnId}` });
  }

  turnInterrupted(_app, pending, answered) {
    if (!answered) {
      // Escape Escape before any output: the turn's records are taken back out of the log.
      truncateSync(this.path, this.rewindTo);
      this.parent = this.rewindParent;
      this.write("session.usage_checkpoint", {
        promptCacheBreakState: [{ conversation: "main", models: {}, pendingRewriteSources: ["rewind"] }],
      });
      return;
    }
    if (pending && this.asked && this.call) {
      this.write("permission.completed", {
        requestId: `request_${this.callCount}`,
        toolCallId: this.call.toolCallId,
        result: { kind: "cancelled", reason: "Session aborted" },
      });
    }
    this.write("assistant.turn_end", { turnId: `${this.turnId}` });
    this.write("abort", { reason: pending && this.asked ? "user_initiated" : "user_abort" });
    this.call = undefined;
  }

  apiError(_app, message) {
    this.write("session.error", { errorType: "model_call", message });
    this.write("assistant.turn_end", { turnId: `${this.turnId}` });
  }

  exiting() {
    try {
      this.write("session.shutdown", { shutdownType: "routine" });
    } finally {
      rmSync(this.lock, { force: true });
      setTitle("");
    }
  }

  // --- screen -------------------------------------------------------------------------------

  itemLines(item, cols, items, index) {
    switch (item.kind) {
      case "user": {
        const time = new Date().toTimeString().slice(0, 5);
        const lines = wrap(item.text, cols - 8, " ❯ ", "   ");
        lines[0] = `${lines[0].padEnd(cols - 7)}${time}`;
        return [...lines, ""];
      }
      case "assistant":
        return [...wrap(item.text, cols, " ● ", "   "), ""];
      case "tool": {
        const next = items[index + 1];
        const done = next?.kind === "result";
        const stopped = !done && next !== undefined;
        const mark = stopped ? "✗" : "$";
        const outcome = done ? " No Content" : stopped ? " Operation aborted by user" : "";
        const name = item.text.tool === "Bash" ? "Shell" : "Read";
        return [` ${mark} ${name} ${item.text.description}${outcome}`, `   ${item.text.command}`, ""];
      }
      case "interrupted":
        return [" ● Operation cancelled by user", ""];
      case "error":
        return [...wrap(item.text, cols, " ✗ ", "   "), ""];
      default:
        return [];
    }
  }

  render(app) {
    const { cols, rows } = screenSize();
    const rule = "─".repeat(cols);
    let bottom;
    let cursor;
    if (app.mode === "approval") {
      const call = app.turn?.pending ?? { command: "", description: "" };
      const inner = cols - 4;
      const box = (text) => `│ ${text.padEnd(inner)} │`;
      const options = APPROVAL_RESULTS.map(
        (result, i) => `${i === app.selected ? "❯" : " "} ${i + 1}. ${APPROVAL_WORDS[result]}`,
      );
      bottom = [
        `╭${"─".repeat(cols - 2)}╮`,
        box(call.description),
        box("─".repeat(inner)),
        box(`╭${"─".repeat(inner - 2)}╮`),
        box(`│ ${call.command.padEnd(inner - 4)} │`),
        box(`╰${"─".repeat(inner - 2)}╯`),
        box(""),
        box("Do you want to run this command?"),
        box(""),
        ...options.map(box),
        box(""),
        box("↑/↓ to navigate · enter to select · esc to cancel"),
        `╰${"─".repeat(cols - 2)}╯`,
      ];
    } else {
      const footer =
        app.mode === "working"
          ? ` ${SPINNER[app.spinnerFrame % SPINNER.length]} Working esc esc edit prompt`
          : app.notice !== ""
            ? ` ${app.notice}`
            : " ← open sidebar · Interactive · Manual Approval · / commands · ? help · tab next tab";
      bottom = [` ${process.cwd()}`, rule, `❯ ${app.input}`, rule, `${footer.padEnd(cols - MODEL.length - 1)}${MODEL}`];
      cursor = { row: rows - 2, col: Math.min(cols, app.input.length + 3) };
    }
    const header = ["", `  Copilot v${VERSION} uses AI.`, "  Check for mistakes.", ""];
    const body = [...header, ...app.items.flatMap((item, i, all) => this.itemLines(item, cols, all, i))];
    const room = Math.max(0, rows - bottom.length);
    const top = body.slice(-room);
    while (top.length < room) top.push("");
    drawFullScreen([...top, ...bottom], rows, cursor);
    const title = this.name === "" ? "GitHub Copilot" : `${this.name} - GitHub Copilot`;
    if (title !== this.title) {
      setTitle(title);
      this.title = title;
    }
  }
}

/** Runs the Copilot CLI stand-in in the current terminal. */
export function runCopilot() {
  process.title = "copilot";
  new StandIn(new CopilotAdapter()).start();
}
