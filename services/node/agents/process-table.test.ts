import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bootTimeMs, processStartTime, readEnviron, readProcess, stillRunning } from "./process-table.js";

describe("process-table: environments, start times, liveness", () => {
  let proc: string;
  beforeAll(async () => {
    proc = await mkdtemp(join(tmpdir(), "sa-proc-"));
    await mkdir(join(proc, "42"));
    await writeFile(join(proc, "42", "environ"), "HOME=/home/x\0EMPTY=\0NOEQUALS\0A=b=c\0");
    await writeFile(join(proc, "uptime"), "100.50 300.00\n");
  });
  afterAll(async () => {
    await rm(proc, { recursive: true, force: true });
  });

  it("reads /proc/<pid>/environ, and nothing for a process it cannot read", async () => {
    expect(await readEnviron(42, proc)).toEqual({ HOME: "/home/x", EMPTY: "", A: "b=c" });
    expect(await readEnviron(43, proc)).toBeUndefined();
    expect((await readEnviron(process.pid))?.PATH).toBe(process.env.PATH);
  });

  it("dates start ticks from the boot time", () => {
    const before = Date.now();
    const boot = bootTimeMs(proc);
    expect(boot).toBeGreaterThanOrEqual(before - 100_500);
    expect(boot).toBeLessThanOrEqual(Date.now() - 100_500);
    const info = { pid: 1, ppid: 0, comm: "init", argv: [], startTicks: 250 };
    expect(processStartTime(info, 1_000_000).getTime()).toBe(1_002_500);
  });

  it("tells a running process from one whose pid was reused", async () => {
    const me = await readProcess(process.pid);
    if (!me) throw new Error("cannot read this process from /proc");
    expect(stillRunning(me)).toBe(true);
    expect(stillRunning({ ...me, startTicks: me.startTicks + 1 })).toBe(false);
  });
});
