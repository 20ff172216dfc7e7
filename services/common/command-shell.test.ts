import { describe, expect, it } from "vitest";
import { CommandShell, ShellRunError } from "./command-shell.js";

const LIMITS = { timeoutMs: 10_000, maxBytes: 1024 * 1024 };

describe("CommandShell", () => {
  it("runs argument arrays as given, one after the other, in one shell, with output and errors apart", async () => {
    const shell = new CommandShell(process.env);
    try {
      const odd = ["a b", "$(touch /tmp/never)", "`x`", "'q'", '"d"', "\\n", "*", ";", "é\t", ""];
      const [printed, failed] = await Promise.all([
        shell.run(["printf", "%s|", ...odd], LIMITS),
        shell.run(["sh", "-c", 'echo out; echo "err: $1" >&2; exit 3', "sh", "why"], LIMITS),
      ]);
      expect(printed.stdout.toString("utf8")).toBe(`${odd.join("|")}|`);
      expect(printed.code).toBe(0);
      expect(printed.stderr).toBe("");
      expect(failed).toMatchObject({ code: 3, stderr: "err: why\n", truncated: false });
      expect(failed.stdout.toString("utf8")).toBe("out\n");
      const pid = shell.pid;
      // Binary output (NULs, no final line break) comes back byte for byte.
      const binary = await shell.run(["printf", "a\\0b\\0\\377"], LIMITS);
      expect([...binary.stdout]).toEqual([0x61, 0, 0x62, 0, 0xff]);
      expect(shell.pid).toBe(pid);
    } finally {
      shell.close();
    }
  });

  it("refuses an argument with a line break (the caller spawns that one itself)", async () => {
    const shell = new CommandShell(process.env);
    try {
      expect(shell.canRun(["echo", "a\nb"])).toBe(false);
      expect(shell.canRun(["echo", "a b"])).toBe(true);
      await expect(shell.run(["echo", "a\nb"], LIMITS)).rejects.toThrow("cannot run through the shell");
    } finally {
      shell.close();
    }
  });

  it("stops a command at its output limit, its time limit or its caller's abort, and runs the next", async () => {
    const shell = new CommandShell(process.env);
    try {
      const cut = await shell.run(["sh", "-c", "yes 0123456789 | head -c 5000000"], { ...LIMITS, maxBytes: 100_000 });
      expect(cut.truncated).toBe(true);
      expect(cut.stdout.length).toBe(100_000);

      const started = performance.now();
      const late = await shell.run(["sleep", "30"], { ...LIMITS, timeoutMs: 300 }).catch((e: unknown) => e);
      expect(late).toBeInstanceOf(ShellRunError);
      expect((late as ShellRunError).reason).toBe("timeout");
      expect((late as Error).message).toBe("took longer than 300 ms and was stopped");
      expect(performance.now() - started).toBeGreaterThanOrEqual(290);

      const abort = new AbortController();
      const leaving = shell.run(["sleep", "30"], { ...LIMITS, signal: abort.signal });
      setTimeout(() => abort.abort(), 100);
      await expect(leaving).rejects.toMatchObject({ reason: "aborted" });

      expect((await shell.run(["echo", "next"], LIMITS)).stdout.toString()).toBe("next\n");
    } finally {
      shell.close();
    }
  });

  it("ends the shell, not the process, when reading its output fails, and runs the next command in another", async () => {
    const shell = new CommandShell(process.env);
    try {
      await shell.run(["true"], LIMITS);
      const first = shell.pid;
      const running = shell.run(["sleep", "5"], LIMITS);
      // The shell's output stream as a reset socket leaves it (the stream is the shell's own: reached
      // through the private field, as nothing outside may touch it).
      const child = (shell as unknown as { shell: { stdout: NodeJS.ReadableStream & { destroy(e: Error): void } } })
        .shell;
      child.stdout.destroy(Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }));
      await expect(running).rejects.toMatchObject({ reason: "ended", message: expect.stringContaining("ECONNRESET") });
      const next = await shell.run(["echo", "again"], LIMITS);
      expect(next.stdout.toString("utf8")).toBe("again\n");
      expect(shell.pid).not.toBe(first);
    } finally {
      shell.close();
    }
  });
});
