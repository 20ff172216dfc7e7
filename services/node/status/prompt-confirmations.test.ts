import { chmod, realpath, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Cli, PromptEffect, PromptKind, StatusReason } from "../../../gen/staragent/v1/session_pb.js";
import { eachTempDir } from "../../../test/support/temp-dir.js";
import { createTestTmux, type TestTmux } from "../../../test/support/tmux.js";
import { waitFor } from "../../../test/support/wait.js";
import {
  type AgentContext,
  type AgentModule,
  type AgentSignals,
  SCREEN_RECHECK_MS,
  wholeScreen,
} from "../agents/agent.js";
import type { ProcessInfo } from "../agents/process-table.js";
import { programNames } from "../agents/program.js";
import { promptFingerprint, type ScreenPrompt, toPendingPrompt } from "../agents/prompt.js";
import { AgentRegistry } from "../agents/registry.js";
import { activePanes, listPanes } from "../tmux/panes.js";
import { StatusEngine } from "./engine.js";
import { PromptConfirmations } from "./prompt-confirmations.js";

/**
 * A CLI that draws its dialog in two writes, as opencode draws an edit's title before its diff: the
 * question and the choices first, the diff once the file `go` exists.
 */
const DRAWN_CLI = `#!/bin/sh
printf 'thinking\\n'
until [ -e ask ]; do sleep 0.02; done
printf 'ASK: write notes.txt?\\n'
printf 'CHOICES: yes no\\n'
until [ -e go ]; do sleep 0.02; done
printf '+ the first line\\n'
sleep 3600
`;

/** The dialog as the test's module reads it: the question, then every line up to the choices. */
function readDrawn(screen: string): ScreenPrompt | undefined {
  const lines = screen.split("\n");
  const ask = lines.findIndex((l) => l.startsWith("ASK: "));
  if (ask < 0 || !lines.some((l) => l.startsWith("CHOICES: "))) return undefined;
  return {
    kind: PromptKind.APPROVAL,
    question: (lines[ask] ?? "").slice(5),
    detail: lines
      .slice(ask + 1)
      .filter((l) => l.trim() !== "" && !l.startsWith("CHOICES: "))
      .join("\n"),
    choices: [{ id: "1", label: "yes", effect: PromptEffect.ALLOW_ONCE, keys: ["y"] }],
  };
}

/** A module for DRAWN_CLI that reads its prompt from the screen, as the real modules do. */
class DrawnModule implements AgentModule {
  readonly cli = Cli.CODEX;
  readonly name = "drawn";
  readonly scope = "tree";
  readonly adoptable = false;
  readonly chatParser = { cli: Cli.CODEX, parse: () => [] };

  recognises(process: ProcessInfo): boolean {
    return programNames(process).names.has("drawn-cli");
  }

  readPrompt(screen: string): ScreenPrompt | undefined {
    return readDrawn(screen);
  }

  async observe(context: AgentContext): Promise<AgentSignals> {
    const read = readDrawn(await wholeScreen(context));
    if (!read) return { turn: "none", completionId: "", detail: "drawn: quiet" };
    return {
      turn: "active",
      completionId: "",
      prompt: { kind: PromptKind.APPROVAL, text: read.question, pending: toPendingPrompt(this.name, read) },
      detail: "drawn: prompt on screen",
    };
  }
}

describe("PromptConfirmations", () => {
  it("confirms a fingerprint read alike from two captures, and only then", () => {
    const c = new PromptConfirmations();
    expect(c.confirm("%1", "a", 1)).toBe("new");
    // The same capture again (a cached screen) proves nothing.
    expect(c.confirm("%1", "a", 1)).toBe("unsettled");
    expect(c.confirm("%1", "a", 2)).toBe("confirmed");
    // Once confirmed, a cached read of it stays confirmed.
    expect(c.confirm("%1", "a", 2)).toBe("confirmed");
    // Another prompt starts over; so does one after no prompt at all.
    expect(c.confirm("%1", "b", 3)).toBe("new");
    expect(c.confirm("%1", "c", 4)).toBe("unsettled");
    expect(c.confirm("%1", "c", 5)).toBe("confirmed");
    c.forget("%1");
    expect(c.confirm("%1", "c", 6)).toBe("new");
    // Panes are apart, and a pane gone is forgotten.
    expect(c.confirm("%2", "c", 6)).toBe("new");
    c.prune(new Set(["%1"]));
    expect(c.confirm("%2", "c", 7)).toBe("new");
    expect(c.confirm("%1", "c", 7)).toBe("confirmed");
  });
});

describe("the status engine's prompt details", () => {
  let tmux: TestTmux | undefined;
  let made: string;
  eachTempDir("sa-prompt-confirm-", (d) => (made = d));
  afterEach(async () => {
    await tmux?.close();
    tmux = undefined;
  });

  it("keeps the session as it was for a dialog read once, and gives its fingerprint only once two captures agree", async () => {
    const dir = await realpath(made);
    const script = join(dir, "drawn-cli");
    await writeFile(script, DRAWN_CLI);
    await chmod(script, 0o755);
    const t = createTestTmux();
    tmux = t;
    await t.run("new-session", "-d", "-s", "s", "-x", "80", "-y", "24", "-c", dir, script);
    const engine = new StatusEngine({ tmux: t.client, agents: new AgentRegistry([new DrawnModule()]), nodeEnv: {} });
    const look = async () => {
      const panes = activePanes(await listPanes(t.client));
      const seen = await engine.inspect(panes, new Map());
      const observation = seen.get("s");
      if (!observation) throw new Error("no observation of session s");
      return observation;
    };
    const screen = () => t.run("capture-pane", "-p", "-t", "=s:");
    await waitFor(async () => (await screen()).includes("thinking"), "the CLI's first line");
    const before = await look();
    expect(before.reason).not.toBe(StatusReason.INPUT_PROMPT);

    // Past the status cache's age, so the next look reads the screen afresh whatever tmux's activity says.
    await new Promise((r) => setTimeout(r, SCREEN_RECHECK_MS + 100));
    await writeFile(join(dir, "ask"), "");
    await waitFor(async () => (await screen()).includes("CHOICES:"), "the dialog's first write");
    // Read once: the session shows what it showed before, for one look.
    expect(await look()).toBe(before);

    // The rest of the dialog, within the second that tmux's activity time does not tell apart.
    await writeFile(join(dir, "go"), "");
    await waitFor(async () => (await screen()).includes("+ the first line"), "the dialog's second write");
    const drawn = readDrawn(await screen());
    if (!drawn) throw new Error("the test's reader found no dialog");
    const whole = promptFingerprint("drawn", drawn);

    // Another prompt than the first capture's: the session waits on a prompt, its details not given yet.
    const secondCapture = await look();
    expect(secondCapture.reason).toBe(StatusReason.INPUT_PROMPT);
    expect(secondCapture.prompt).toBe("write notes.txt?");
    expect(secondCapture.pendingPrompt).toBeUndefined();
    const confirmed = await look();
    expect(confirmed.pendingPrompt?.fingerprint).toBe(whole);
    expect(confirmed.pendingPrompt?.detail).toBe("+ the first line");
    // Confirmed, it stays published while the screen stays.
    expect((await look()).pendingPrompt?.fingerprint).toBe(whole);
  });
});
