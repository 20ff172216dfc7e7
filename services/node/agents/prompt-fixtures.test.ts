import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PromptEffect, PromptKind } from "../../../gen/staragent/v1/session_pb.js";
import { readClaudePrompt } from "./claude/prompt-reader.js";
import type { PendingTool } from "./claude/transcript.js";
import { readCodexPrompt } from "./codex/prompt-reader.js";
import { readOpencodePrompt } from "./opencode/prompt-reader.js";
import { promptFingerprint, type ScreenPrompt } from "./prompt.js";
import { createBuiltInAgents } from "./registry.js";

/** One prompt fixture: a screen (and for Claude Code a pending tool call) and the prompt read from it. */
interface PromptCase {
  readonly name: string;
  readonly screen: string;
  readonly pending?: { name: string; input: Record<string, unknown> };
  readonly expectedQuestion?: string;
  readonly expect: Record<string, unknown>;
}

/**
 * Each module's prompt reader, from the registry; Claude Code's also takes the pending tool call its
 * module reads from the transcript (the fixtures give it as `pending`).
 */
const READERS: Record<string, (screen: string, c: PromptCase) => ScreenPrompt | undefined> = Object.fromEntries(
  createBuiltInAgents()
    .modules.filter((m) => m.readPrompt !== undefined)
    .map((m) => [
      m.name,
      m.name === "claude"
        ? (screen: string, c: PromptCase) =>
            readClaudePrompt(
              screen,
              c.pending ? [{ id: "toolu_1", ...c.pending } as PendingTool] : [],
              c.expectedQuestion ?? "",
            )
        : (screen: string, c: PromptCase) => m.readPrompt?.(screen, c.expectedQuestion ?? ""),
    ]),
);

/** The reader's prompt in the fixtures' terms (enum names, every field present). */
function asFixture(prompt: ScreenPrompt): Record<string, unknown> {
  const { basis: _basis, choices, kind, ...rest } = prompt;
  return {
    kind: PromptKind[kind],
    ...rest,
    truncated: rest.truncated ?? false,
    choices: choices.map((c) => ({ ...c, effect: PromptEffect[c.effect] })),
  };
}

async function screenOf(cli: string, range: string, file: string): Promise<string> {
  return readFile(join(import.meta.dirname, cli, "fixtures", range, file), "utf8");
}

for (const cli of Object.keys(READERS)) {
  const root = join(import.meta.dirname, cli, "fixtures");
  const ranges = (await readdir(root, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name);
  for (const range of ranges.sort()) {
    const file = join(root, range, "prompts.json");
    const cases = await readFile(file, "utf8").then(
      (t) => JSON.parse(t) as PromptCase[],
      () => [],
    );
    if (cases.length === 0) continue;
    describe(`${cli} ${range} prompts`, () => {
      it.each(cases.map((c) => [c.name, c] as const))("%s", async (_name, c) => {
        const prompt = READERS[cli]?.(await screenOf(cli, range, c.screen), c);
        expect(prompt && asFixture(prompt)).toEqual(c.expect);
      });
    });
  }
}

describe("prompt fingerprints", () => {
  it("are the same for two reads of the same prompt, also with the selection moved", async () => {
    const first = readCodexPrompt(await screenOf("codex", "0.17x", "approval.screen.txt"));
    const moved = readCodexPrompt(await screenOf("codex", "0.17x", "moved-selection.screen.txt"));
    if (!first || !moved) throw new Error("no prompt read");
    expect(promptFingerprint("codex", moved)).toBe(promptFingerprint("codex", first));
  });

  it("differ for the same question about another command", async () => {
    const build = readClaudePrompt(await screenOf("claude", "2.1.x", "approval.screen.txt"));
    const dist = readClaudePrompt(await screenOf("claude", "2.1.x", "other-command.screen.txt"));
    if (!build || !dist) throw new Error("no prompt read");
    expect(dist.question).toBe(build.question);
    expect(promptFingerprint("claude", dist)).not.toBe(promptFingerprint("claude", build));
  });

  it("come from the screen alone, so a fresh screen read at answer time matches one enriched from the log", async () => {
    const screen = await screenOf("claude", "2.1.x", "approval.screen.txt");
    const enriched = readClaudePrompt(screen, [
      { id: "t", name: "Bash", input: { command: "rm -rf build", description: "Remove the build directory" } },
    ]);
    const plain = readClaudePrompt(screen);
    if (!enriched || !plain) throw new Error("no prompt read");
    expect(enriched.detail).not.toBe(plain.detail);
    expect(promptFingerprint("claude", enriched)).toBe(promptFingerprint("claude", plain));
  });

  it("agree for a real AskUserQuestion read with its pending call (the status) and without it (the answer)", async () => {
    const screen = await screenOf("claude", "2.1.332", "ask-user-question.screen.txt");
    const question = "Which color should the compat marker be?";
    const call = {
      id: "t",
      name: "AskUserQuestion",
      input: {
        questions: [
          {
            question,
            options: [
              { label: "Red", description: "A red marker" },
              { label: "Blue", description: "A blue marker" },
            ],
          },
        ],
      },
    };
    const enriched = readClaudePrompt(screen, [call]);
    const plain = readClaudePrompt(screen, [], question);
    if (!enriched || !plain) throw new Error("no prompt read");
    // With the call the labels are the CLI's own; the screen alone joins each description to its label.
    expect(enriched.choices.map((c) => c.label).slice(0, 2)).toEqual(["Red", "Blue"]);
    expect(plain.choices.map((c) => c.label).slice(0, 2)).toEqual(["Red A red marker", "Blue A blue marker"]);
    expect(promptFingerprint("claude", enriched)).toBe(promptFingerprint("claude", plain));
  });

  it("differ between opencode's permission dialog and the always-allow confirmation it leads to", async () => {
    const asked = readOpencodePrompt(await screenOf("opencode", "1.18", "allow-always-asked.screen.txt"));
    const confirm = readOpencodePrompt(await screenOf("opencode", "1.18", "always-allow-confirm.screen.txt"));
    if (!asked || !confirm) throw new Error("no prompt read");
    expect([asked.question, confirm.question]).toEqual(["Permission required", "Always allow"]);
    expect(promptFingerprint("opencode", confirm)).not.toBe(promptFingerprint("opencode", asked));
  });

  it("differ between CLIs for the same words", async () => {
    const prompt = readOpencodePrompt(await screenOf("opencode", "1.18", "permission.screen.txt"));
    if (!prompt) throw new Error("no prompt read");
    expect(promptFingerprint("opencode", prompt)).not.toBe(promptFingerprint("codex", prompt));
  });
});

describe("prompt readers", () => {
  it("read no prompt from a screen without one", async () => {
    const idle = await screenOf("claude", "1.0.x", "idle.screen.txt");
    expect(readClaudePrompt(idle)).toBeUndefined();
    expect(readCodexPrompt(await screenOf("codex", "0.17x", "idle-after-turns.screen.txt"))).toBeUndefined();
    expect(readOpencodePrompt(idle)).toBeUndefined();
  });

  it("need the options under a question: a question quoted in the conversation is not a prompt", () => {
    expect(readClaudePrompt("⏺ I asked: Do you want to proceed?\n\n❯ \n")).toBeUndefined();
  });
});
