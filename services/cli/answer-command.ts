import { createInterface } from "node:readline/promises";
import { parseArgs } from "node:util";
import { connectHub, sessionArgument, UsageError } from "./client.js";
import type { Command } from "./command.js";
import { describePrompt } from "./prompt-format.js";

const USAGE = "usage: staragent answer NAME|NODE/NAME CHOICE [--text T] [--fingerprint F]";

/**
 * `staragent answer NAME CHOICE`: answers a session's pending prompt with one of its choices (its id,
 * as `staragent prompts` lists them). With `--fingerprint` (from `staragent prompts --json`) the answer
 * lands only on that very prompt, for scripts. Without it, the prompt is shown in full and a person
 * at a terminal confirms it; without a terminal it refuses, so nothing is answered blind.
 */
export const answerCommand: Command = {
  run: async (args, config) => {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: { text: { type: "string", default: "" }, fingerprint: { type: "string" } },
    });
    const [target, choiceId] = positionals;
    if (target === undefined || choiceId === undefined || positionals.length > 2) throw new UsageError(USAGE);
    const hub = await connectHub(config);
    const name = sessionArgument(target);
    let fingerprint = values.fingerprint;
    if (fingerprint === undefined) {
      if (!process.stdin.isTTY || !process.stdout.isTTY) {
        throw new UsageError(
          "answer: not at a terminal, so there is no one to confirm the prompt; pass --fingerprint F (from `staragent prompts --json`)",
        );
      }
      const prompt = (await hub.sessions.getSession({ name })).session?.pendingPrompt;
      if (!prompt || prompt.fingerprint === "") {
        process.stderr.write(`${target} has no prompt that can be answered now\n`);
        return 1;
      }
      const choice = prompt.choices.find((c) => c.id === choiceId);
      if (!choice)
        throw new UsageError(`answer: "${choiceId}" is not a choice of this prompt\n${describePrompt(prompt)}`);
      process.stdout.write(`${describePrompt(prompt)}\n`);
      const rl = createInterface({ input: process.stdin, output: process.stdout });
      const reply = await rl.question(`Answer "${choice.label}"? [y/N] `).finally(() => rl.close());
      if (!/^y(es)?$/i.test(reply.trim())) {
        process.stdout.write("not answered\n");
        return 1;
      }
      fingerprint = prompt.fingerprint;
    }
    const res = await hub.sessions.answerPrompt({ name, fingerprint, choiceId, text: values.text });
    process.stdout.write(`answered ${target}: ${res.detail}\n`);
    return 0;
  },
};
