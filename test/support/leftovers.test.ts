import { execFileSync, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "./servers.js";
import { waitFor } from "./wait.js";

/** True while a process of this id runs (a zombie, ended and not yet reaped, does not). */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

/** True while a tmux server answers on the private socket. */
function tmuxServerAlive(socket: string): boolean {
  try {
    execFileSync("tmux", ["-L", socket, "list-sessions"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/**
 * A script that starts a Hub process and a private tmux server with a session, as a benchmark does,
 * then is stopped by a signal before its own cleanup can run: neither outlives it.
 */
describe("leftovers", () => {
  it.each([
    ["SIGTERM", 143],
    ["SIGINT", 130],
  ] as const)(
    "a script stopped by %s stops the Hub and the tmux server it started",
    async (signal, status) => {
      const script = `
      import { exitOnSignals } from "./test/support/leftovers.ts";
      import { startServerProcess } from "./test/support/servers.ts";
      import { createTestTmux } from "./test/support/tmux.ts";
      exitOnSignals();
      const tmux = createTestTmux();
      await tmux.run("new-session", "-d", "-s", "busy", "sleep 600");
      const hub = await startServerProcess({ kind: "hub", tmuxSocket: tmux.socketName, token: "t".repeat(40) });
      console.log(JSON.stringify({ hub: hub.process.pid, socket: tmux.socketName }));
      setInterval(() => {}, 1 << 30);
    `;
      const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
        cwd: REPO_ROOT,
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stderr = "";
      child.stderr.on("data", (c: Buffer) => {
        stderr += c.toString();
      });
      const started = await new Promise<{ hub: number; socket: string }>((resolve, reject) => {
        let out = "";
        child.stdout.on("data", (c: Buffer) => {
          out += c.toString();
          const line = out.split("\n").find((l) => l.startsWith("{"));
          if (line) resolve(JSON.parse(line));
        });
        child.once("exit", (code) => reject(new Error(`the script exited with ${code} before it started:\n${stderr}`)));
      });
      try {
        expect(alive(started.hub)).toBe(true);
        expect(tmuxServerAlive(started.socket)).toBe(true);
        const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
        child.kill(signal);
        expect(await exited).toBe(status);
        // SIGKILL takes effect at once, but the kernel may finish the process a moment later.
        await waitFor(() => !alive(started.hub), "the Hub to be gone");
        expect(tmuxServerAlive(started.socket)).toBe(false);
        expect(stderr).toContain(`${signal}: stopping what this run started`);
      } finally {
        if (alive(started.hub)) process.kill(started.hub, "SIGKILL");
        if (tmuxServerAlive(started.socket)) execFileSync("tmux", ["-L", started.socket, "kill-server"]);
        if (child.exitCode === null) child.kill("SIGKILL");
      }
    },
    30_000,
  );
});
