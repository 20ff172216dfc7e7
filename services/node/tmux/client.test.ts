import { describe, expect, it } from "vitest";
import { escapeArgument, NEXT_COMMAND, sessionTarget, TmuxClient, TmuxError } from "./client.js";

describe("tmux client helpers", () => {
  it("escapes only a trailing ';', which tmux would read as a command separator", () => {
    expect(escapeArgument(";")).toBe("\\;");
    expect(escapeArgument("kill-server;")).toBe("kill-server\\;");
    expect(escapeArgument("a;b")).toBe("a;b");
    expect(escapeArgument("plain")).toBe("plain");
  });

  it("targets sessions by exact name", () => {
    expect(sessionTarget("foo")).toBe("=foo");
  });

  it("tells not-found failures from others", () => {
    expect(new TmuxError("x", "can't find session: =nope", 1).isNotFound).toBe(true);
    expect(new TmuxError("x", "no server running on /tmp/tmux-0/x", 1).isNotFound).toBe(true);
    expect(new TmuxError("x", "duplicate session: a", 1).isNotFound).toBe(false);
    expect(new TmuxError("x", "server exited unexpectedly", 1).isNotFound).toBe(true);
  });

  it("selects its socket with -L, forces UTF-8 with -u, and never passes TMUX on", () => {
    const client = new TmuxClient({ socketName: "sock", env: { TMUX: "/tmp/x,1,0", TMUX_PANE: "%1", KEEP: "1" } });
    expect(client.argv(["list-sessions"])).toEqual(["-u", "-L", "sock", "list-sessions"]);
    expect(client.environment).toEqual({ KEEP: "1" });
    expect(new TmuxClient({ env: {} }).argv(["list-sessions"])).toEqual(["-u", "list-sessions"]);
  });

  it("escapes every argument, so only NEXT_COMMAND separates commands", () => {
    const client = new TmuxClient({ env: {} });
    expect(client.argv(["display-message", "-p", "x;", NEXT_COMMAND, "kill-server;"])).toEqual([
      "-u",
      "display-message",
      "-p",
      "x\\;",
      ";",
      "kill-server\\;",
    ]);
  });

  it("reports a missing tmux binary as a TmuxError", async () => {
    const client = new TmuxClient({ tmuxPath: "/nonexistent/tmux", env: {} });
    await expect(client.run(["list-sessions"])).rejects.toBeInstanceOf(TmuxError);
  });
});
