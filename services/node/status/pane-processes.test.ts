import { describe, expect, it } from "vitest";
import { testPane } from "../../../test/support/panes.js";
import type { AgentModule } from "../agents/agent.js";
import { type ProcessInfo, readProcess } from "../agents/process-table.js";
import { ShellModule } from "../agents/shell/shell-module.js";
import { PaneProcesses } from "./pane-processes.js";

/** A module recognising processes named `agent` (and nothing of the real machine). */
const AGENT: AgentModule = {
  ...new ShellModule(),
  name: "agent",
  scope: "tree",
  recognises: (p) => p.comm === "agent",
  observe: new ShellModule().observe,
};

/** This test's own process, as /proc has it: a process that is still running. */
async function self(): Promise<ProcessInfo> {
  const info = await readProcess(process.pid);
  if (!info) throw new Error("cannot read this process from /proc");
  return info;
}

describe("PaneProcesses", () => {
  it("finds the CLI below a pane and reads the tree again only when the foreground command changes", async () => {
    const me = await self();
    const trees: number[] = [];
    const processes = new PaneProcesses({
      agents: [AGENT],
      nodeEnv: {},
      readTree: async (pid) => {
        trees.push(pid);
        return [
          { pid, ppid: 1, comm: "bash", argv: ["bash"], startTicks: 1 },
          { ...me, comm: "agent" },
        ];
      },
    });
    const pane = testPane({ paneId: "%1", panePid: 100, paneCurrentCommand: "agent" });
    const first = await processes.of([pane], new Set(["%1"]));
    expect(first.get("%1")?.root?.comm).toBe("bash");
    expect(first.get("%1")?.found?.agent).toBe(AGENT);
    expect(first.get("%1")?.found?.process.pid).toBe(process.pid);
    // The CLI still runs and the command is the same: no /proc walk.
    expect((await processes.of([pane], new Set(["%1"]))).get("%1")).toBe(first.get("%1"));
    expect(trees).toEqual([100]);
    await processes.of([{ ...pane, paneCurrentCommand: "bash" }], new Set(["%1"]));
    expect(trees).toEqual([100, 100]);
  });

  it("reads the whole table when the kernel offers no children files", async () => {
    const processes = new PaneProcesses({
      agents: [AGENT],
      nodeEnv: {},
      readTree: async () => undefined,
      readProcesses: async () => ({
        byPid: new Map([
          [7, { pid: 7, ppid: 1, comm: "bash", argv: ["bash"], startTicks: 1 }],
          [8, { pid: 8, ppid: 7, comm: "agent", argv: ["agent"], startTicks: 2 }],
        ]),
        children: new Map([[7, [8]]]),
      }),
    });
    const found = await processes.of([testPane({ paneId: "%1", panePid: 7 })], new Set(["%1"]));
    expect(found.get("%1")?.found?.process.pid).toBe(8);
  });

  it("names the same CLI in other live panes of the folder as siblings", async () => {
    const processes = new PaneProcesses({
      agents: [AGENT],
      nodeEnv: {},
      readTree: async (pid) => [{ pid, ppid: 1, comm: "agent", argv: ["agent"], startTicks: 1 }],
    });
    const a = testPane({ paneId: "%1", panePid: 11, paneCurrentPath: "/p" });
    const b = testPane({ paneId: "%2", panePid: 12, paneCurrentPath: "/p" });
    const c = testPane({ paneId: "%3", panePid: 13, paneCurrentPath: "/q" });
    const found = await processes.of([a, b, c], new Set(["%1", "%2", "%3"]));
    expect(processes.siblingsOf(a, found.get("%1")?.found, [a, b, c]).map((p) => p.pid)).toEqual([12]);
    expect(processes.siblingsOf(a, found.get("%1")?.found, [a, { ...b, paneDead: true }, c])).toEqual([]);
    expect(processes.siblingsOf(a, undefined, [a, b, c])).toEqual([]);
  });

  it("reads a CLI's environment once, the node's own when it cannot be read", async () => {
    const processes = new PaneProcesses({ agents: [], nodeEnv: { HOME: "/node-home" } });
    const me = await self();
    const env = await processes.environmentOf(me);
    expect(env.PATH).toBe(process.env.PATH);
    expect(processes.environmentOf(me)).toBe(processes.environmentOf(me));
    const gone = { pid: 2 ** 30, ppid: 1, comm: "x", argv: [], startTicks: 1 };
    expect(await processes.environmentOf(gone)).toEqual({ HOME: "/node-home" });
  });

  it("dates a process from its start ticks", async () => {
    const me = await self();
    // This process started before now, on the machine's own boot time.
    expect(new PaneProcesses({ agents: [], nodeEnv: {} }).startOf(me).getTime()).toBeLessThanOrEqual(Date.now());
    const processes = new PaneProcesses({ agents: [], nodeEnv: {}, bootTime: () => 1_000_000 });
    expect(processes.startOf({ ...me, startTicks: 100 }).getTime()).toBe(1_001_000);
    expect(processes.startOf({ ...me, pid: me.pid + 1, startTicks: 200 }).getTime()).toBe(1_002_000);
  });

  it("dates each process by the wall clock as of its first sight, as NTP slews the clock", async () => {
    const me = await self();
    let boot = 1_000_000;
    const processes = new PaneProcesses({ agents: [], nodeEnv: {}, bootTime: () => boot });
    const early = { ...me, startTicks: 100 };
    expect(processes.startOf(early).getTime()).toBe(1_001_000);
    // A day later the wall clock has been slewed 9 s behind the boot clock: a process started now is
    // dated by the clock its logs are written with, and the one seen before keeps its date.
    boot -= 9_000;
    const late = { ...me, pid: me.pid + 1, startTicks: 8_640_000 };
    expect(processes.startOf(late).getTime()).toBe(1_000_000 - 9_000 + 86_400_000);
    expect(processes.startOf(early).getTime()).toBe(1_001_000);
  });
});
