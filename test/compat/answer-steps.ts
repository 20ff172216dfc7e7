import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { toJson } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import {
  type PendingPrompt,
  PendingPromptSchema,
  PromptEffect,
  SessionStatus,
  StatusReason,
} from "../../gen/staragent/v1/session_pb.js";
import type { CliStep, StepContext } from "./cli-driver.js";
import { promptReadTwice } from "./hub-session-client.js";
import type { ScriptedToolCall } from "./model-reply.js";
import { recordScreen } from "./prompt-recording.js";
import { within } from "./within.js";

/** The new file the edit steps ask to write, and what each CLI's prompt must name. */
export const COMPAT_EDIT_FILE = "compat-edit.txt";
/** Its content. */
export const COMPAT_EDIT_CONTENT = "first line\nsecond line\n";
/** The URL the fetch steps ask for (refused, so never fetched). */
export const COMPAT_FETCH_URL = "https://example.com/compat/notes.html";
/** True when a prompt (as JSON) is about COMPAT_EDIT_FILE, by its file path. */
export const namesEditFile = (prompt: string) => /"filePath":"[^"]*compat-edit\.txt"/.test(prompt);
/** True when a prompt (as JSON) is about COMPAT_FETCH_URL, whole, as its URL. */
export const namesFetchUrl = (prompt: string) => prompt.includes(`"url":"${COMPAT_FETCH_URL}"`);

/** How long a CLI may take to send its model request after a prompt or an answer. */
const MODEL_REQUEST_TIMEOUT_MS = 45_000;

/**
 * Waits for the instance's prompt (read twice alike; another than the one with fingerprint `after`,
 * the prompt just answered) and returns it with its first choice of `effect`.
 */
async function pendingChoice(step: StepContext, effect: PromptEffect, after = "") {
  const read = await promptReadTwice((what, accept) =>
    step.expect(what, (s) => s.pendingPrompt?.fingerprint !== after && accept(s)),
  );
  const prompt = read.pendingPrompt;
  const choice = prompt?.choices.find((c) => c.effect === effect);
  if (!prompt || !choice) throw new Error(`no ${PromptEffect[effect]} choice in ${JSON.stringify(prompt)}`);
  return { prompt, choice };
}

/**
 * Answers the instance's prompt through the Hub; fails when the prompt was still shown afterwards, and
 * when the Hub finds another prompt on screen, with both prompts whole.
 */
async function answer(step: StepContext, prompt: PendingPrompt, choiceId: string, text = "") {
  try {
    const answered = await step.hub.answerPrompt({
      name: step.instance.name,
      fingerprint: prompt.fingerprint,
      choiceId,
      text,
    });
    if (/still on screen/.test(answered.detail)) throw new Error(`answer: ${answered.detail}`);
    return answered;
  } catch (err) {
    const now = err instanceof ConnectError ? err.findDetails(PendingPromptSchema)[0] : undefined;
    if (!now) throw err;
    const json = (p: PendingPrompt) => JSON.stringify(toJson(PendingPromptSchema, p));
    throw new Error(
      `${err instanceof Error ? err.message : String(err)}\nanswered: ${json(prompt)}\non screen: ${json(now)}`,
    );
  }
}

/** Waits for the instance's turn to end with an unseen completion, then marks it seen. */
export async function finishTurn(step: StepContext): Promise<void> {
  const finished = await step.expect(
    "turn done",
    (s) => s.statusReason === StatusReason.UNSEEN_COMPLETION && s.completionId !== "",
  );
  step.recordCompletion(finished.completionId);
  await step.markSeen(finished.completionId);
}

/**
 * "Allow always" through AnswerPrompt: the command runs, and the same command asked for again runs
 * without a prompt (nobody answers the second one: the model gets its result all the same). With
 * `confirm`, the CLI confirms "always" in a second dialog (its question, and what its detail holds).
 */
export function allowAlwaysStep(
  cli: string,
  toolCall: (command: string) => ScriptedToolCall,
  confirm?: { readonly question: string; readonly detail: string },
): CliStep {
  return {
    title: "allows a command always through AnswerPrompt: it runs, and runs again without asking",
    async run(step) {
      const file = `compat-always-${step.instance.sessionId.slice(-1)}.txt`;
      const command = `echo compat-always >> ${file}`;
      const first = step.mock.enqueue({ toolCall: toolCall(command) });
      const second = step.mock.enqueue({ toolCall: toolCall(command) });
      const done = step.mock.enqueue({ text: "Written twice.", hold: true });
      await step.type(`write the always file twice ${step.instance.sessionId}`);
      await within(first.requested, MODEL_REQUEST_TIMEOUT_MS, "the CLI to ask the model");
      const { prompt, choice } = await pendingChoice(step, PromptEffect.ALLOW_ALWAYS);
      await recordScreen(step, cli, "approval-allow-always");
      await answer(step, prompt, choice.id);
      if (confirm) {
        // The CLI asks again, naming what "always" will allow: cancelled once (back to the first
        // dialog), then chosen again and confirmed, each through AnswerPrompt.
        let again = await pendingChoice(step, PromptEffect.ALLOW_ALWAYS, prompt.fingerprint);
        if (again.prompt.question !== confirm.question || !again.prompt.detail.includes(confirm.detail))
          throw new Error(`the confirmation as read: ${JSON.stringify(again.prompt)}`);
        await recordScreen(step, cli, "always-allow-confirm");
        const cancel = again.prompt.choices.find((c) => c.effect === PromptEffect.DENY);
        if (!cancel) throw new Error(`no cancel in ${JSON.stringify(again.prompt)}`);
        await answer(step, again.prompt, cancel.id);
        const back = await pendingChoice(step, PromptEffect.ALLOW_ALWAYS, again.prompt.fingerprint);
        if (back.prompt.question !== prompt.question) throw new Error(`after Cancel: ${JSON.stringify(back.prompt)}`);
        await answer(step, back.prompt, back.choice.id);
        again = await pendingChoice(step, PromptEffect.ALLOW_ALWAYS, back.prompt.fingerprint);
        await answer(step, again.prompt, again.choice.id);
      }
      await within(second.requested, MODEL_REQUEST_TIMEOUT_MS, "the first result to reach the model");
      // The second, identical command: nobody answers anything now.
      await within(done.requested, MODEL_REQUEST_TIMEOUT_MS, "the second command to run unasked");
      const written = await readFile(join(step.cwd, file), "utf8");
      if (written !== "compat-always\ncompat-always\n") throw new Error(`the file holds ${JSON.stringify(written)}`);
      done.release();
      await finishTurn(step);
    },
  };
}

/**
 * Denying through AnswerPrompt with the CLI's "no, and tell it what to do instead" choice (the only
 * refusal some CLIs offer): the command does not run, and the text reaches the model as the next prompt.
 */
export function tellInsteadStep(cli: string, toolCall: (command: string) => ScriptedToolCall): CliStep {
  const instead = "Do not write the file; just say you will not.";
  return {
    title: "denies a command through AnswerPrompt, telling it what to do instead: it does not run",
    async run(step) {
      const file = `compat-denied-${step.instance.sessionId.slice(-1)}.txt`;
      const ask = step.mock.enqueue({ toolCall: toolCall(`echo never > ${file}`) });
      const next = step.mock.enqueue({ text: "I will not write it.", hold: true });
      await step.type(`write the file I will deny ${step.instance.sessionId}`);
      await within(ask.requested, MODEL_REQUEST_TIMEOUT_MS, "the CLI to ask the model");
      const { prompt, choice } = await pendingChoice(step, PromptEffect.TELL_INSTEAD);
      await recordScreen(step, cli, "approval-tell-instead");
      await answer(step, prompt, choice.id, instead);
      const request = await within(next.requested, MODEL_REQUEST_TIMEOUT_MS, "the text to reach the model");
      if (!JSON.stringify(request.body).includes(instead)) throw new Error("the model was not sent the text");
      if (existsSync(join(step.cwd, file))) throw new Error(`the denied command ran: ${file} exists`);
      await step.expect(
        "the told turn running",
        (s) => s.status === SessionStatus.WORKING && s.statusReason === StatusReason.ACTIVE_TURN,
      );
      next.release();
      await finishTurn(step);
      if (existsSync(join(step.cwd, file))) throw new Error(`the denied command ran: ${file} exists`);
    },
  };
}

/**
 * Records the screen of a prompt for `toolCall` (an edit, a fetch) and refuses it through AnswerPrompt:
 * with its DENY choice (the turn ends interrupted), or where the CLI offers none with its tell-instead
 * choice (the text goes to the model as the next prompt). Either way the tool never runs.
 */
export function recordAndDenyStep(
  cli: string,
  name: string,
  toolCall: ScriptedToolCall | ((cwd: string) => ScriptedToolCall),
  check: (prompt: string) => boolean,
): CliStep {
  return {
    title: `reads its ${name} prompt, and denies it through AnswerPrompt`,
    async run(step) {
      const ask = step.mock.enqueue({ toolCall: typeof toolCall === "function" ? toolCall(step.cwd) : toolCall });
      await step.type(`please do the ${name} ${step.instance.sessionId}`);
      await within(ask.requested, MODEL_REQUEST_TIMEOUT_MS, "the CLI to ask the model");
      const read = await promptReadTwice((what, accept) => step.expect(what, accept));
      await recordScreen(step, cli, name);
      const prompt = read.pendingPrompt;
      if (!prompt || !check(JSON.stringify(prompt)))
        throw new Error(`the ${name} prompt as read: ${JSON.stringify(prompt)}`);
      const deny = prompt.choices.find((c) => c.effect === PromptEffect.DENY);
      const tell = prompt.choices.find((c) => c.effect === PromptEffect.TELL_INSTEAD);
      if (deny) {
        await answer(step, prompt, deny.id);
        await step.expect(
          `${name} refused`,
          (s) => s.status === SessionStatus.IDLE && s.statusReason === StatusReason.INTERRUPTED,
        );
        return;
      }
      if (!tell) throw new Error(`no way to refuse in ${JSON.stringify(prompt)}`);
      const instead = `Do not do the ${name}.`;
      const next = step.mock.enqueue({ text: "Not doing it." });
      await answer(step, prompt, tell.id, instead);
      const request = await within(next.requested, MODEL_REQUEST_TIMEOUT_MS, "the text to reach the model");
      if (!JSON.stringify(request.body).includes(instead)) throw new Error("the model was not sent the text");
      await finishTurn(step);
    },
  };
}
