import { describe, expect, it } from "vitest";
import { testPane } from "../../../test/support/panes.js";
import { AgentRegistry } from "../agents/registry.js";
import { ShellModule } from "../agents/shell/shell-module.js";
import { TmuxClient } from "../tmux/client.js";
import type { PaneInfo } from "../tmux/panes.js";
import { StatusEngine } from "./engine.js";

const PANE = testPane({ historySize: 10, cursorX: 2, cursorY: 5 });

/** The engine over a pane whose only process is bash at its prompt (no /proc, no tmux needed). */
function engine(): StatusEngine {
  return new StatusEngine({
    tmux: new TmuxClient({ socketName: "sa-unused" }),
    agents: new AgentRegistry([new ShellModule()]),
    nodeEnv: {},
    readTree: async (pid) => [{ pid, ppid: 1, comm: "bash", argv: ["bash"], startTicks: 1 }],
  });
}

async function revision(e: StatusEngine, pane: PaneInfo): Promise<string | undefined> {
  return (await e.inspect(new Map([[pane.sessionName, pane]]), new Map())).get(pane.sessionName)?.chatRevision;
}

describe("chat_revision", () => {
  it("changes within tmux's one-second activity when the cursor or the scrollback moves", async () => {
    const e = engine();
    const first = await revision(e, PANE);
    expect(await revision(e, { ...PANE, cursorX: 3 })).not.toBe(first);
    expect(await revision(e, { ...PANE, cursorY: 6, cursorX: 0 })).not.toBe(first);
    expect(await revision(e, { ...PANE, historySize: 11 })).not.toBe(first);
  });

  it("stays the same while nothing in the pane moved", async () => {
    const e = engine();
    expect(await revision(e, PANE)).toBe(await revision(e, { ...PANE }));
  });
});
