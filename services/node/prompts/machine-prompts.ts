import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  Cli,
  type PendingPrompt,
  PendingPromptSchema,
  PromptEffect,
  PromptKind,
  SessionType,
} from "../../../gen/staragent/v1/session_pb.js";
import {
  type AnswerPromptRequest,
  type AnswerPromptResponse,
  AnswerPromptResponseSchema,
  type InterruptSessionResponse,
} from "../../../gen/staragent/v1/session_service_pb.js";
import { sleep } from "../../common/async-queue.js";
import type { KeyedLock } from "../../common/keyed-lock.js";
import type { Logger } from "../../common/log.js";
import type { ScreenChoice, ScreenPrompt } from "../agents/prompt.js";
import { promptFingerprint, toPendingPrompt } from "../agents/prompt.js";
import type { AgentRegistry } from "../agents/registry.js";
import { validateChatText } from "../chat/chat-text.js";
import { pasteMessage } from "../chat/paste-message.js";
import type { SessionLookup } from "../session-lookup.js";
import { readPaneScreen } from "../status/screen.js";
import { type TmuxClient, TmuxError } from "../tmux/client.js";
import { type AuditLog, redactSubject } from "./audit-log.js";
import { interruptTurn } from "./interrupt-turn.js";

/**
 * How long an answer waits for its prompt to go away (or change) after the keys are typed. A CLI on a
 * busy machine took over 3 s to redraw after its key (Qwen Code in compat beside a full test run), and
 * a free-text answer is typed only once its prompt has gone, so the wait is generous.
 */
export const ANSWER_CONFIRM_TIMEOUT_MS = 6_000;
/** Pause between screen reads while waiting for the prompt to go. */
const ANSWER_POLL_MS = 20;
/** How long a free-text choice waits for the CLI's text box after its key, before typing into it. */
const TEXT_BOX_SETTLE_MS = 150;

/** Who is answering, for the audit log. */
export interface PromptCaller {
  /** `user` or `node` (a Hub forwarding its caller's answer). */
  readonly tokenKind: string;
  /** Where from: the peer address, and the Hub's caller for a forwarded call. */
  readonly from: string;
}

/** What MachinePrompts is built from. */
export interface MachinePromptsOptions {
  readonly sessions: SessionLookup;
  readonly tmux: TmuxClient;
  readonly agents: AgentRegistry;
  /** The machine's per-session input lock, shared with chat sends so typing never interleaves. */
  readonly inputLock: KeyedLock;
  readonly audit: AuditLog;
  readonly log: Logger;
  /** Overrides ANSWER_CONFIRM_TIMEOUT_MS (tests). */
  readonly confirmTimeoutMs?: number;
}

/**
 * AnswerPrompt over one machine's sessions (docs/api.md, docs/security.md): reads the screen afresh,
 * types the keys of the chosen choice only when the prompt there has the fingerprint the person saw,
 * then waits for it to go away or change. Every call, refused or not, is written to the audit log.
 */
export class MachinePrompts {
  constructor(private readonly options: MachinePromptsOptions) {}

  async answerPrompt(
    tmuxName: string,
    request: AnswerPromptRequest,
    caller: PromptCaller,
    signal: AbortSignal,
  ): Promise<AnswerPromptResponse> {
    let seen: { prompt: ScreenPrompt; choice?: ScreenChoice } | undefined;
    const record = (outcome: string) =>
      this.options.audit
        .append({
          tokenKind: caller.tokenKind,
          from: caller.from,
          session: tmuxName,
          fingerprint: request.fingerprint,
          kind: seen ? (PromptKind[seen.prompt.kind] ?? "") : "",
          question: seen?.prompt.question ?? "",
          subject: redactSubject(seen?.prompt.command || seen?.prompt.filePath || seen?.prompt.url || ""),
          choiceId: request.choiceId,
          choiceLabel: seen?.choice?.label ?? "",
          textBytes: Buffer.byteLength(request.text),
          outcome,
        })
        .catch((err: unknown) => this.options.log.warn("audit log not written", { error: String(err) }));
    try {
      const response = await this.options.inputLock.run(tmuxName, () =>
        this.answer(tmuxName, request, signal, (s) => {
          seen = s;
        }),
      );
      await record(response.detail);
      return response;
    } catch (err) {
      const refusal = ConnectError.from(err);
      await record(`refused: ${Code[refusal.code] ?? refusal.code}: ${refusal.rawMessage}`);
      throw err;
    }
  }

  /** InterruptSession: the CLI's interrupt keys, under the session's input lock (interrupt-turn.ts). */
  interruptSession(tmuxName: string, signal: AbortSignal): Promise<InterruptSessionResponse> {
    const { sessions, tmux, agents, log } = this.options;
    return this.options.inputLock.run(tmuxName, () =>
      onPane(tmuxName, () => interruptTurn({ sessions, tmux, agents, log }, tmuxName, signal)),
    );
  }

  private async answer(
    tmuxName: string,
    request: AnswerPromptRequest,
    signal: AbortSignal,
    saw: (seen: { prompt: ScreenPrompt; choice?: ScreenChoice }) => void,
  ): Promise<AnswerPromptResponse> {
    if (request.fingerprint === "") {
      throw new ConnectError("fingerprint: quote the pending_prompt.fingerprint you answer", Code.InvalidArgument);
    }
    if (request.choiceId === "")
      throw new ConnectError("choice_id: name one of the prompt's choices", Code.InvalidArgument);
    const { sessions, agents } = this.options;
    const session = await sessions.getSession(tmuxName);
    if (session.type === SessionType.SYSTEM) {
      throw new ConnectError(
        `${tmuxName} is a StarAgent system session and has no prompts to answer`,
        Code.FailedPrecondition,
      );
    }
    const module = agents.get(session.cli);
    if (!module?.readPrompt) {
      throw new ConnectError(
        `${tmuxName} runs ${(Cli[session.cli] ?? "a program").toLowerCase()}, which shows no prompts StarAgent can answer; nothing was typed`,
        Code.FailedPrecondition,
      );
    }
    const context = sessions.sessionContext(tmuxName);
    if (!context) throw new ConnectError(`session ${session.name} not found`, Code.NotFound);
    const paneId = context.pane.paneId;
    const expected = session.pendingPrompt?.kind === PromptKind.QUESTION ? session.pendingPrompt.question : "";
    const read = () => this.screen(tmuxName, paneId).then((s) => module.readPrompt?.(s, expected));
    const prompt = await read();
    if (!prompt) throw changed("no prompt is on screen now", undefined);
    saw({ prompt });
    const fingerprint = promptFingerprint(module.name, prompt);
    if (fingerprint !== request.fingerprint) {
      throw changed(`another one is on screen now: ${describe(prompt)}`, toPendingPrompt(module.name, prompt));
    }
    const choice = prompt.choices.find((c) => c.id === request.choiceId);
    if (!choice) {
      const ids = prompt.choices.map((c) => `${c.id} (${c.label})`).join(", ");
      throw new ConnectError(
        `choice_id: "${request.choiceId}" is not a choice of this prompt; its choices: ${ids}`,
        Code.InvalidArgument,
      );
    }
    saw({ prompt, choice });
    const takesText = choice.takesText === true;
    if (takesText && request.text === "") {
      throw new ConnectError(
        `text: "${choice.label}" needs the text to tell the agent; nothing was typed`,
        Code.InvalidArgument,
      );
    }
    if (!takesText && request.text !== "") {
      throw new ConnectError(`text: "${choice.label}" takes no text; nothing was typed`, Code.InvalidArgument);
    }
    const text = takesText ? validateChatText(request.text) : "";
    if (signal.aborted) throw new ConnectError("the caller went away; nothing was typed", Code.Canceled);
    await this.tmux(tmuxName, ["send-keys", "-t", paneId, ...choice.keys]);
    this.options.log.info("prompt answered", {
      session: tmuxName,
      choice: choice.id,
      effect: PromptEffect[choice.effect],
    });
    const next = await this.waitForChange(read, module.name, fingerprint);
    if (next === "same") {
      const seconds = (this.options.confirmTimeoutMs ?? ANSWER_CONFIRM_TIMEOUT_MS) / 1000;
      return create(AnswerPromptResponseSchema, {
        nextPrompt: toPendingPrompt(module.name, prompt),
        detail: `typed, but the prompt was still on screen after ${seconds} s`,
      });
    }
    if (takesText) {
      await sleep(TEXT_BOX_SETTLE_MS);
      await this.paste(tmuxName, paneId, text, module.submitQuietMs);
    }
    return create(AnswerPromptResponseSchema, {
      ...(next ? { nextPrompt: toPendingPrompt(module.name, next) } : {}),
      detail: `${next ? "the prompt changed" : "the prompt went away"}${takesText ? ", and the text was typed" : ""}`,
    });
  }

  /** Re-reads the screen until the prompt with `fingerprint` is gone: the next prompt, undefined, or "same". */
  private async waitForChange(
    read: () => Promise<ScreenPrompt | undefined>,
    cli: string,
    fingerprint: string,
  ): Promise<ScreenPrompt | undefined | "same"> {
    const deadline = Date.now() + (this.options.confirmTimeoutMs ?? ANSWER_CONFIRM_TIMEOUT_MS);
    for (;;) {
      const now = await read();
      if (!now || promptFingerprint(cli, now) !== fingerprint) return now;
      if (Date.now() >= deadline) return "same";
      await sleep(ANSWER_POLL_MS);
    }
  }

  private screen(tmuxName: string, paneId: string): Promise<string> {
    return onPane(tmuxName, () => readPaneScreen(this.options.tmux, paneId));
  }

  private async tmux(tmuxName: string, args: string[]): Promise<void> {
    await onPane(tmuxName, () => this.options.tmux.run(args));
  }

  private paste(tmuxName: string, paneId: string, text: string, submitQuietMs?: number): Promise<void> {
    return onPane(tmuxName, () => pasteMessage(this.options.tmux, paneId, text, submitQuietMs));
  }
}

/** Runs tmux work on a session's pane; a pane (or session) gone meanwhile is NOT_FOUND. */
async function onPane<T>(tmuxName: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof TmuxError && err.isNotFound) throw gone(tmuxName);
    throw err;
  }
}

/** FAILED_PRECONDITION for a prompt that is not the one answered, with the prompt now shown (if any). */
function changed(why: string, now: PendingPrompt | undefined): ConnectError {
  return new ConnectError(
    `the prompt changed: ${why}; nothing was typed`,
    Code.FailedPrecondition,
    undefined,
    now ? [{ desc: PendingPromptSchema, value: now }] : [],
  );
}

function gone(tmuxName: string): ConnectError {
  return new ConnectError(`session ${tmuxName} is gone; nothing was typed`, Code.NotFound);
}

/** A prompt in one line for an error: its question and what it is about. */
function describe(prompt: ScreenPrompt): string {
  const about = prompt.command || prompt.filePath || prompt.url;
  return `"${prompt.question}"${about ? ` about ${about.split("\n")[0]}` : ""}`;
}
