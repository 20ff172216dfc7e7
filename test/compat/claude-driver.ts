import { mkdtemp, realpath, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  ChatRole,
  Cli,
  PromptEffect,
  PromptKind,
  SessionStatus,
  StatusReason,
} from "../../gen/staragent/v1/session_pb.js";
import { MARKDOWN_ANSWER } from "../support/markdown-answer.js";
import {
  COMPAT_EDIT_CONTENT,
  COMPAT_EDIT_FILE,
  COMPAT_FETCH_URL,
  finishTurn,
  namesEditFile,
  namesFetchUrl,
  recordAndDenyStep,
} from "./answer-steps.js";
import { type CliDriver, type CliStep, type PreparedCli, throwawayCli } from "./cli-driver.js";
import { promptReadTwice } from "./hub-session-client.js";
import { CLAUDE_BIN } from "./installed-clis.js";
import type { RecordedRequest } from "./mock-model-server.js";
import { answerDialog, captureScreen } from "./pane-screen.js";
import { recordScreen } from "./prompt-recording.js";
import { within } from "./within.js";

/** The pinned version (test/compat/package.json). */
const CLAUDE_VERSION = "2.1.332";
/** The model id the mock reports back. */
const CLAUDE_MODEL = "claude-compat-mock";
/** The API key the CLI sends; its last 20 characters are pre-approved in `~/.claude.json`. */
const API_KEY = "sk-ant-compat-0123456789abcdefghijklmnop";
/** Characters of the key Claude Code stores as approved. */
const APPROVED_KEY_SUFFIX_CHARS = 20;
/** Variables that would point Claude Code at other state, credentials or endpoints than the mock. */
const CLEARED_VARIABLES = [
  "CLAUDE_CONFIG_DIR",
  "ANTHROPIC_AUTH_TOKEN",
  "ANTHROPIC_MODEL",
  "CLAUDE_CODE_USE_BEDROCK",
  "CLAUDE_CODE_USE_VERTEX",
  "XDG_CONFIG_HOME",
];
/**
 * A claude.ai login's long-lived token (what `claude setup-token` prints), for the plan-limit checks:
 * with it, 2.1.332 sends it as a bearer token to ANTHROPIC_BASE_URL and prints a 429 with the
 * plan-limit headers as the plan's limit, where an API-key login prints an API error (seen 2026-12-03).
 */
const CLAUDE_AI_TOKEN = "sk-ant-oat01-compat-mock-token";
/** Claude Code's switches for everything that would reach the network on its own. */
const OFFLINE_SWITCHES = ["DISABLE_TELEMETRY=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1"];
/** The footer Claude Code draws once it takes input. */
const READY_FOOTER = "for shortcuts";
/** The question the AskUserQuestion step asks (answered with its second option through AnswerPrompt). */
const QUESTION = "Which color should the compat marker be?";
/** How long the CLI may take to send its model request. */
const MODEL_REQUEST_TIMEOUT_MS = 45_000;
/** Claude Code's own steps: a question asked through AskUserQuestion, and `/clear`. */
const CLAUDE_STEPS: readonly CliStep[] = [
  {
    title: "confirms a follow-up sent while it works as queued behind the turn, then runs it as the next turn",
    async run(step) {
      // The model holds its first answer; 2.1.332 queues the follow-up (a `queue-operation` enqueue in
      // its transcript) and sends it as the next prompt once the first turn ends.
      const held = step.mock.enqueue({ text: "First answer.", hold: true });
      const next = step.mock.enqueue({ text: "Answer with the follow-up." });
      await step.type(`start a turn to queue on ${step.instance.sessionId}`);
      await within(held.requested, MODEL_REQUEST_TIMEOUT_MS, "Claude Code to ask the model");
      await step.expect("the turn running", (s) => s.status === SessionStatus.WORKING);
      const sent = await step.hub.sendChatMessage({ name: step.instance.name, text: "and mind the tests" });
      if (!sent.confirmed || !sent.confirmationDetail.includes("queued it behind the running turn"))
        throw new Error(`the follow-up: ${JSON.stringify(sent)}`);
      held.release();
      const request = await within(next.requested, MODEL_REQUEST_TIMEOUT_MS, "Claude Code to send the follow-up");
      if (!JSON.stringify(request.body).includes("and mind the tests"))
        throw new Error("the model was not sent the follow-up");
      // The first turn's own completion may show for a moment before the follow-up's prompt is
      // written: the follow-up's completion is the one whose reply is the follow-up's answer.
      const done = await step.expect(
        "the follow-up's turn done",
        (s) =>
          s.statusReason === StatusReason.UNSEEN_COMPLETION &&
          s.completionId !== "" &&
          s.replyExcerpt.includes("Answer with the follow-up."),
      );
      const chat = (await step.hub.getChat({ name: step.instance.name })).messages;
      const texts = chat.map((m) => `${ChatRole[m.role]}:${m.text}`);
      const first = texts.lastIndexOf("ASSISTANT:First answer.");
      const followUp = texts.lastIndexOf("USER:and mind the tests");
      if (first < 0 || followUp < first || !texts.slice(followUp).includes("ASSISTANT:Answer with the follow-up."))
        throw new Error(`the chat, in order: ${JSON.stringify(texts.slice(-6))}`);
      step.recordCompletion(done.completionId);
      await step.markSeen(done.completionId);
    },
  },
  {
    title: "shows an answer with a code block, a list and a table once in chat (screen and log merged)",
    async run(step) {
      const reply = step.mock.enqueue({ text: MARKDOWN_ANSWER });
      await step.type(`show me an add helper ${step.instance.sessionId}`);
      await within(reply.requested, MODEL_REQUEST_TIMEOUT_MS, "Claude Code to ask the model");
      const done = await step.expect(
        "turn done",
        (s) => s.statusReason === StatusReason.UNSEEN_COMPLETION && s.completionId !== "",
      );
      const screen = await captureScreen(step.tmux, step.instance.target);
      const chat = (await step.hub.getChat({ name: step.instance.name })).messages;
      const answers = chat.filter((m) => m.role === ChatRole.ASSISTANT && m.text.includes("Compat-markdown answer"));
      if (answers.length !== 1)
        throw new Error(
          `the answer ${answers.length} times in chat: ${JSON.stringify(chat.map((m) => [m.source, m.text]))}\nscreen:\n${screen}`,
        );
      if (!answers[0]?.text.includes("```ts")) throw new Error(`the logged answer was not kept: ${answers[0]?.text}`);
      await step.markSeen(done.completionId);
    },
  },
  {
    title: "reports an AskUserQuestion as a question prompt, working once answered, then the completion",
    async run(step) {
      const ask = step.mock.enqueue({
        toolCall: {
          name: "AskUserQuestion",
          arguments: {
            questions: [
              {
                question: QUESTION,
                header: "Color",
                options: [
                  { label: "Red", description: "A red marker" },
                  { label: "Blue", description: "A blue marker" },
                ],
                multiSelect: false,
              },
            ],
          },
        },
      });
      const answer = step.mock.enqueue({ text: "Blue it is.", hold: true });
      await step.type(`ask me which color to use ${step.instance.sessionId}`);
      await within(ask.requested, MODEL_REQUEST_TIMEOUT_MS, "Claude Code to ask the model");
      await step.expect(
        "question asked",
        (s) =>
          s.status === SessionStatus.REVIEW &&
          s.statusReason === StatusReason.INPUT_PROMPT &&
          s.promptKind === PromptKind.QUESTION &&
          s.prompt === QUESTION,
      );
      // Answered through AnswerPrompt with the second option (not the highlighted one), once the same
      // prompt has been read twice, as a person reads a drawn dialog before answering it.
      const read = await promptReadTwice((what, accept) => step.expect(what, accept));
      await recordScreen(step, "claude", "ask-user-question");
      const prompt = read.pendingPrompt;
      const blue = prompt?.choices.find((c) => c.label.startsWith("Blue"));
      if (!prompt || !blue || prompt.question !== QUESTION)
        throw new Error(`the question as read: ${JSON.stringify(prompt)}`);
      if (!prompt.choices.every((c) => c.effect === PromptEffect.ANSWER))
        throw new Error(`choices: ${JSON.stringify(prompt.choices)}`);
      await step.hub.answerPrompt({ name: step.instance.name, fingerprint: prompt.fingerprint, choiceId: blue.id });
      const request = await within(answer.requested, MODEL_REQUEST_TIMEOUT_MS, "the answer to reach the model");
      if (!JSON.stringify(request.body).includes("Blue")) throw new Error("the model was not sent the answer");
      await step.expect(
        "answered, model request open",
        (s) => s.status === SessionStatus.WORKING && s.statusReason === StatusReason.ACTIVE_TURN,
      );
      answer.release();
      await finishTurn(step);
    },
  },
  recordAndDenyStep(
    "claude",
    "edit",
    (cwd) => ({
      name: "Write",
      arguments: { file_path: join(cwd, COMPAT_EDIT_FILE), content: COMPAT_EDIT_CONTENT },
    }),
    namesEditFile,
  ),
  recordAndDenyStep(
    "claude",
    "fetch",
    { name: "WebFetch", arguments: { url: COMPAT_FETCH_URL, prompt: "Summarize the notes" } },
    namesFetchUrl,
  ),
  {
    title: "goes idle with no turn after /clear",
    async run(step) {
      await step.type("/clear");
      await step.expect(
        "cleared: a new conversation",
        (s) => s.status === SessionStatus.IDLE && s.statusReason === StatusReason.NO_TURN && s.completionId === "",
      );
    },
  },
];

/** The real Claude Code TUI, configured for the mock through `~/.claude.json` and its environment. */
export const claudeDriver: CliDriver = {
  bin: CLAUDE_BIN,
  version: CLAUDE_VERSION,
  sessionPrefix: "compat-claude",
  label: `Claude Code ${CLAUDE_VERSION}`,
  cli: Cli.CLAUDE,
  model: CLAUDE_MODEL,
  sideReply(request: RecordedRequest) {
    // Requests without tools are the CLI's own (titles, probes): a short reply, not a scripted turn.
    return request.api === "messages" && !hasTools(request) ? { text: "Compat check" } : undefined;
  },
  prepare: (mockBaseUrl: string) => prepareClaude(mockBaseUrl, "api-key"),
  isReady: (screen) => screen.includes(READY_FOOTER),
  approvalToolCall: (command) => ({
    name: "Bash",
    arguments: { command, description: "Run the compat check's command" },
  }),
  isToolResult: (request) => JSON.stringify(field(request.body, "messages") ?? []).includes('"tool_result"'),
  approvalQuestion: "Do you want to proceed?",
  async approve(tmux, target) {
    // "1. Yes" is selected: Enter confirms it.
    await answerDialog(tmux, target, "Do you want to proceed?", "Enter");
  },
  async interrupt(tmux, target) {
    await tmux.run("send-keys", "-t", target, "Escape");
  },
  // While a reply streams, 2.1.332 draws its bullet alone (`●`) and the text only at the end.
  replyStarted: (screen) => /^● ?$/m.test(screen) || screen.includes("Compat-long-answer"),
  async cancelApproval(tmux, target) {
    await answerDialog(tmux, target, "Do you want to proceed?", "Escape");
  },
  async clearInput(tmux, target) {
    // Esc before the first reply puts the prompt back into the input box: Ctrl-U empties it.
    await tmux.run("send-keys", "-t", target, "C-u");
  },
  ownSteps: CLAUDE_STEPS,
};

/**
 * A throwaway HOME and folder for Claude Code against the mock, logged in with an API key (the
 * default) or with a claude.ai token (`claude-ai`: the plan-limit checks).
 */
async function prepareClaude(mockBaseUrl: string, login: "api-key" | "claude-ai"): Promise<PreparedCli> {
  const home = await mkdtemp(join(tmpdir(), "sa-compat-claude-home-"));
  const cwd = await realpath(await mkdtemp(join(tmpdir(), "sa-compat-claude-work-")));
  await writeFile(join(home, ".claude.json"), JSON.stringify(claudeSettings(cwd)));
  const credentials =
    login === "api-key"
      ? [`ANTHROPIC_API_KEY=${API_KEY}`]
      : ["-u", "ANTHROPIC_API_KEY", `CLAUDE_CODE_OAUTH_TOKEN=${CLAUDE_AI_TOKEN}`];
  const command = [
    "env",
    ...CLEARED_VARIABLES.flatMap((v) => ["-u", v]),
    ...credentials,
    `HOME=${home}`,
    // The CLI appends /v1/messages itself.
    `ANTHROPIC_BASE_URL=${mockBaseUrl.replace(/\/v1$/, "")}`,
    ...OFFLINE_SWITCHES,
    CLAUDE_BIN,
    "--permission-mode",
    "manual",
  ];
  return throwawayCli(home, cwd, command, ["--continue"]);
}

/** Claude Code logged in with a claude.ai token: a hit plan limit is printed and logged as such. */
export const claudePlanDriver: CliDriver = {
  ...claudeDriver,
  sessionPrefix: "compat-claude-plan",
  label: `Claude Code ${CLAUDE_VERSION} (claude.ai login)`,
  prepare: (mockBaseUrl: string) => prepareClaude(mockBaseUrl, "claude-ai"),
};

/** `~/.claude.json`: onboarding done, the key approved, the work folder trusted (docs/compat.md, "Configuration that works offline"). */
function claudeSettings(cwd: string): unknown {
  return {
    hasCompletedOnboarding: true,
    lastOnboardingVersion: CLAUDE_VERSION,
    theme: "dark",
    customApiKeyResponses: { approved: [API_KEY.slice(-APPROVED_KEY_SUFFIX_CHARS)], rejected: [] },
    projects: {
      [cwd]: { hasTrustDialogAccepted: true, hasCompletedProjectOnboarding: true, allowedTools: [] },
    },
  };
}

function hasTools(request: RecordedRequest): boolean {
  const tools = field(request.body, "tools");
  return Array.isArray(tools) && tools.length > 0;
}

function field(value: unknown, key: string): unknown {
  return typeof value === "object" && value !== null && key in value
    ? (value as Record<string, unknown>)[key]
    : undefined;
}
