import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTestTmux, type TestTmux } from "../../../test/support/tmux.js";
import { waitFor } from "../../../test/support/wait.js";
import type { TmuxArgument, TmuxClient, TmuxResult } from "./client.js";
import { capturePanes } from "./pane-captures.js";
import { PaneLister } from "./pane-lister.js";
import { listPanes } from "./panes.js";

type Exec = (args: readonly TmuxArgument[]) => Promise<TmuxResult>;

/** Each way an invocation runs: spawned by the client, and through the pane lister's shell. */
const RUNNERS: [string, (client: TmuxClient) => { exec?: Exec; close: () => void }][] = [
  ["spawned", () => ({ close: () => {} })],
  [
    "through the pane lister's shell",
    (client) => {
      const lister = new PaneLister(client);
      return { exec: (args) => lister.exec(args), close: () => lister.close() };
    },
  ],
];

describe.each(RUNNERS)("capturePanes on a private tmux server, %s", (_name, runner) => {
  let tmux: TestTmux;
  let exec: Exec | undefined;
  let close = () => {};
  beforeEach(() => {
    tmux = createTestTmux();
    ({ exec, close } = runner(tmux.client));
  });
  afterEach(async () => {
    close();
    await tmux.close();
  });

  /** A session whose pane prints `text` (printf's escapes) and stays; its pane id once it has printed. */
  async function printing(name: string, text: string): Promise<string> {
    const script = 'printf -- "$1"; exec sleep 600';
    await tmux.run("new-session", "-d", "-s", name, "-x", "60", "-y", "6", "sh", "-c", script, "sh", text);
    const last = text.split("\\n").filter(Boolean).at(-1) ?? "";
    return waitFor(async () => {
      const pane = (await listPanes(tmux.client)).find((p) => p.sessionName === name);
      const screen = pane ? await tmux.run("capture-pane", "-p", "-t", pane.paneId) : "";
      return screen.includes(last) ? pane?.paneId : undefined;
    }, `${name} printed`);
  }

  it("captures every pane in one invocation, each text its own, whatever the panes print", async () => {
    const first = await printing("one", "first screen\\n");
    // A line shaped like a marker (another nonce) is text, not a boundary.
    const second = await printing("two", "\\036cafecafecafecafe:1\\nsecond screen\\n");
    const third = await printing("three", "third screen\\n");
    const texts = await capturePanes(
      tmux.client,
      [{ paneId: first }, { paneId: second, flags: ["-J"] }, { paneId: third }],
      exec,
    );
    const lines = texts.map((t) => t?.split("\n").filter((l) => l.trim() !== ""));
    expect(lines[0]).toEqual(["first screen"]);
    expect(lines[1]).toHaveLength(2);
    expect(lines[1]?.[0]).toMatch(/cafecafecafecafe:1$/);
    expect(lines[1]?.[1]).toBe("second screen");
    expect(lines[2]).toEqual(["third screen"]);
  });

  it("keeps the captures before a pane that has gone, marks that one undefined and asks again for the rest", async () => {
    const first = await printing("one", "first\\n");
    const gone = await printing("gone", "gone\\n");
    const third = await printing("three", "third\\n");
    await tmux.run("kill-session", "-t", "=gone");
    const texts = await capturePanes(tmux.client, [{ paneId: first }, { paneId: gone }, { paneId: third }], exec);
    expect(texts[0]).toContain("first");
    expect(texts[1]).toBeUndefined();
    expect(texts[2]).toContain("third");
  });

  it("answers undefined for every pane when no tmux server runs", async () => {
    expect(await capturePanes(tmux.client, [{ paneId: "%0" }, { paneId: "%1" }], exec)).toEqual([undefined, undefined]);
  });
});
