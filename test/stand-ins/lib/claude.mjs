// Claude Code stand-in: the alternate-screen TUI (`❯` input box between rules, spinner, approval
// box) and the native state of docs/status.md (JSONL transcript, sessions/<pid>.json). See README.md.
import { randomUUID } from "node:crypto";
import { appendFileSync, mkdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { FREE_TEXT_OPTION, QUESTION_CALL, StandIn } from "./stand-in.mjs";
import { drawFullScreen, ESC, envMs, screenSize, setTitle, wrap } from "./terminal.mjs";

/** Version written into every record; below 2.1 no sessions file and turn_duration only for long turns. */
const VERSION = process.env.STANDIN_VERSION || "2.1.332";
/** Delay between the screen showing "done" and `turn_duration` landing in the transcript. */
const TURN_END_LAG_MS = envMs("STANDIN_TURN_END_LAG_MS", 300);
/** How late transcript lines reach the file, in order (the real CLI buffers its writes); 0: at once. */
const LOG_LAG_MS = envMs("STANDIN_LOG_LAG_MS", 0);
/** 2.0.x wrote turn_duration only for turns longer than this. */
const OLD_TURN_DURATION_MIN_MS = 30_000;
const MODEL = "claude-opus-4-6";
const SPINNER = ["·", "✢", "✳", "✶", "✻", "✽"];
const TITLE_WORKING = ["◐", "◑"];

const modern = (() => {
  const [major, minor] = VERSION.split(".").map(Number);
  return major > 2 || (major === 2 && minor >= 1);
})();

/** The transcript folder name for a start cwd (docs/status.md: non-alphanumerics become `-`). */
export function encodeProjectDir(cwd) {
  const enc = cwd.replace(/[^A-Za-z0-9]/g, "-");
  if (enc.length <= 200) return enc;
  let hash = 0;
  for (const ch of cwd) hash = (hash * 31 + ch.charCodeAt(0)) >>> 0;
  return `${enc.slice(0, 200)}-${hash.toString(36)}`;
}

class ClaudeAdapter {
  /** Esc before the first reply puts the prompt back into the input box (2.1.332). */
  returnsUnansweredPrompt = true;

  constructor() {
    this.configDir = process.env.CLAUDE_CONFIG_DIR || join(homedir(), ".claude");
    // `claude --resume <session id>` goes on writing that conversation's transcript.
    const resumeAt = process.argv.indexOf("--resume");
    this.sessionId = (resumeAt >= 0 && process.argv[resumeAt + 1]) || randomUUID();
    this.startCwd = realpathSync(process.cwd());
    this.transcript = join(this.configDir, "projects", encodeProjectDir(this.startCwd), `${this.sessionId}.jsonl`);
    this.sessionsFile = join(this.configDir, "sessions", `${process.pid}.json`);
    this.startedAt = Date.now();
    this.parent = null;
    this.title = "";
  }

  // --- native state -------------------------------------------------------------------------

  writeSessionsFile(status, waitingFor) {
    if (!modern) return;
    mkdirSync(join(this.configDir, "sessions"), { recursive: true });
    const body = {
      pid: process.pid,
      sessionId: this.sessionId,
      cwd: this.startCwd,
      startedAt: this.startedAt,
      version: VERSION,
      kind: "interactive",
      entrypoint: "cli",
      status,
      ...(waitingFor ? { waitingFor } : {}),
      updatedAt: Date.now(),
      statusUpdatedAt: Date.now(),
    };
    // Rewritten in place like the real CLI (not atomically): readers must cope with a torn read.
    writeFileSync(this.sessionsFile, JSON.stringify(body));
  }

  append(record) {
    const line = `${JSON.stringify(record)}\n`;
    if (LOG_LAG_MS === 0) {
      this.write(line);
      return;
    }
    this.unwritten ??= [];
    this.unwritten.push(line);
    if (this.unwritten.length === 1) setTimeout(() => this.write(this.unwritten.splice(0).join("")), LOG_LAG_MS);
  }

  write(lines) {
    mkdirSync(join(this.transcript, ".."), { recursive: true });
    appendFileSync(this.transcript, lines);
  }

  envelope(type, fields) {
    const uuid = randomUUID();
    const record = {
      parentUuid: this.parent,
      isSidechain: false,
      userType: "external",
      cwd: process.cwd(),
      sessionId: this.sessionId,
      version: VERSION,
      gitBranch: "",
      type,
      ...fields,
      uuid,
      timestamp: new Date().toISOString(),
    };
    this.parent = uuid;
    this.append(record);
    return uuid;
  }

  assistant(content, stopReason, extra = {}) {
    const id = `msg_${randomUUID().replace(/-/g, "").slice(0, 24)}`;
    return this.envelope("assistant", {
      message: {
        model: MODEL,
        id,
        type: "message",
        role: "assistant",
        content,
        stop_reason: stopReason,
        stop_sequence: null,
        usage: { input_tokens: 4, cache_creation_input_tokens: 0, cache_read_input_tokens: 1000, output_tokens: 12 },
      },
      requestId: `req_${id.slice(4)}`,
      ...extra,
    });
  }

  /** A prompt typed during a turn: 2.1.332 logs it queued, then dequeued as its own turn starts. */
  queued(_app, prompt, operation) {
    if (!modern) return;
    this.append({
      type: "queue-operation",
      operation,
      timestamp: new Date().toISOString(),
      sessionId: this.sessionId,
      ...(operation === "enqueue" ? { content: prompt } : {}),
    });
  }

  started() {
    process.stdout.write(`${ESC}[?1049h`);
    this.writeSessionsFile("idle");
  }

  turnStarted(_app, prompt) {
    this.turnUuid = undefined;
    this.messageCount = 1;
    this.append({
      type: "file-history-snapshot",
      messageId: randomUUID(),
      snapshot: { trackedFileBackups: {}, timestamp: new Date().toISOString() },
      isSnapshotUpdate: false,
    });
    this.turnUuid = this.envelope("user", { message: { role: "user", content: prompt } });
    this.writeSessionsFile("busy");
  }

  toolCall(_app, call) {
    this.toolUseId = `toolu_${randomUUID().replace(/-/g, "").slice(0, 20)}`;
    this.toolUuid = this.assistant(
      [
        {
          type: "tool_use",
          id: this.toolUseId,
          name: call.tool,
          input:
            call.tool === "Bash"
              ? { command: call.command, description: call.description }
              : call.tool === "AskUserQuestion"
                ? {
                    questions: [
                      {
                        question: call.question,
                        header: "DB",
                        options: call.options.map((label) => ({ label })),
                        multiSelect: false,
                      },
                    ],
                  }
                : { file_path: `${process.cwd()}/${call.command}` },
        },
      ],
      "tool_use",
    );
    this.messageCount++;
  }

  /** Draws QUESTION_CALL like Claude Code's AskUserQuestion. */
  get asksQuestions() {
    return true;
  }

  approvalWaiting(_app, call, waiting) {
    const what = call.tool === "AskUserQuestion" ? "input needed" : "permission prompt";
    this.writeSessionsFile(waiting ? "waiting" : "busy", waiting ? what : undefined);
  }

  toolResult(_app, _call, output, isError) {
    this.envelope("user", {
      message: {
        role: "user",
        content: [{ tool_use_id: this.toolUseId, type: "tool_result", content: output, is_error: isError }],
      },
      toolUseResult: { stdout: output, stderr: "", interrupted: false },
      sourceToolAssistantUUID: this.toolUuid,
    });
    this.messageCount++;
  }

  reply(_app, text) {
    this.assistant([{ type: "text", text }], "end_turn");
    this.messageCount++;
  }

  turnCompleted(_app, ms) {
    this.writeSessionsFile("idle");
    if (!modern && ms < OLD_TURN_DURATION_MIN_MS) return;
    const count = this.messageCount;
    setTimeout(() => {
      this.envelope("system", { subtype: "turn_duration", durationMs: ms, messageCount: count, isMeta: false });
    }, TURN_END_LAG_MS);
  }

  turnInterrupted(_app, pending, answered) {
    if (!answered) {
      // Esc before the model's first reply writes nothing (docs/status.md); the sessions file turns idle.
      this.writeSessionsFile("idle");
      return;
    }
    if (pending) {
      this.envelope("user", {
        message: {
          role: "user",
          content: [
            { type: "tool_result", content: "Interrupted by user", is_error: true, tool_use_id: this.toolUseId },
          ],
        },
        toolUseResult: "Interrupted by user",
        sourceToolAssistantUUID: this.toolUuid,
      });
    }
    const text = pending ? "[Request interrupted by user for tool use]" : "[Request interrupted by user]";
    this.envelope("user", { message: { role: "user", content: [{ type: "text", text }] } });
    this.writeSessionsFile("idle");
  }

  apiError(_app, message) {
    this.envelope("assistant", {
      message: {
        id: randomUUID(),
        container: null,
        model: "<synthetic>",
        role: "assistant",
        stop_reason: "stop_sequence",
        stop_sequence: "",
        type: "message",
        usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
        content: [{ type: "text", text: message }],
        context_management: null,
      },
      isApiErrorMessage: true,
    });
    this.writeSessionsFile("idle");
  }

  exiting() {
    if (this.unwritten?.length) this.write(this.unwritten.splice(0).join(""));
    process.stdout.write(`${ESC}[?2004l${ESC}[?1049l`);
    rmSync(this.sessionsFile, { force: true });
  }

  // --- screen -------------------------------------------------------------------------------

  itemLines(item, cols) {
    switch (item.kind) {
      case "user":
        return ["", ...wrap(item.text, cols, "> ", "  ")];
      case "assistant":
        return ["", ...wrap(item.text, cols, "⏺ ", "  ")];
      case "tool":
        return ["", `⏺ ${item.text.tool}(${item.text.command})`];
      case "result":
        return wrap(item.text.split("\n")[0], cols, "  ⎿  ", "     ");
      case "interrupted":
        return ["  ⎿  Interrupted · What should Claude do instead?"];
      case "error":
        return wrap(item.text, cols, "  ⎿  ", "     ");
      case "done":
        return ["", `✻ Worked for ${item.text}`];
      default:
        return [];
    }
  }

  render(app) {
    const { cols, rows } = screenSize();
    const rule = "─".repeat(cols);
    const title = app.mode === "working" ? `${TITLE_WORKING[app.spinnerFrame % 2]} Claude Code` : "✳ Claude Code";
    if (title !== this.title) {
      setTitle(title);
      this.title = title;
    }
    let bottom;
    let cursor;
    if (app.mode === "approval") {
      const call = app.turn?.pending ?? { command: "", description: "" };
      bottom = [
        rule,
        " Bash command",
        "",
        `   ${call.command}`,
        `   ${call.description}`,
        "",
        " Do you want to proceed?",
        ...[
          "1. Yes",
          `2. Yes, and don't ask again for rm commands in ${app.cwd}`,
          "3. No, and tell Claude what to do differently (esc)",
        ].map((o, i) => `${i === app.selected ? " ❯ " : "   "}${o}`),
        "",
        " Esc to cancel",
      ];
    } else if (app.mode === "question") {
      const options = [...QUESTION_CALL.options, FREE_TEXT_OPTION];
      bottom = [
        rule,
        " ☐ DB",
        "",
        ` ${QUESTION_CALL.question}`,
        "",
        ...options.map((o, i) => `${i === app.selected ? " ❯ " : "   "}${i + 1}. ${o}`),
        ...(app.questionText !== undefined ? ["", `   > ${app.questionText}`] : []),
        "",
        " Enter to select · ↑/↓ to navigate · Esc to cancel",
      ];
    } else {
      const inputLines = wrap(app.input, cols, "❯ ", "  ");
      const footer = app.notice || (app.mode === "working" ? "  esc to interrupt" : "  ? for shortcuts");
      const spinner =
        app.mode === "working"
          ? [`${SPINNER[app.spinnerFrame % SPINNER.length]} Thinking… (${app.elapsedSeconds}s · esc to interrupt)`, ""]
          : [];
      bottom = [...spinner, rule, ...inputLines, rule, footer];
      const last = inputLines[inputLines.length - 1] ?? "❯ ";
      cursor = { row: rows - 2, col: Math.min(cols, last.length + 1) };
    }
    const header = [` ✻ Claude Code v${VERSION}`, `   ${app.cwd}`];
    const body = [...header, ...app.items.flatMap((item) => this.itemLines(item, cols))];
    const room = Math.max(0, rows - bottom.length);
    const top = body.slice(-room);
    while (top.length < room) top.push("");
    drawFullScreen([...top, ...bottom], rows, cursor);
  }
}

/** Runs the Claude Code stand-in in the current terminal. */
export function runClaude() {
  process.title = "claude";
  new StandIn(new ClaudeAdapter()).start();
}
