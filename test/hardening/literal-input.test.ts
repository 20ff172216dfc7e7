import { randomBytes } from "node:crypto";
import { access, mkdir, readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { failureOf } from "../foundation/hub-fixture.js";
import { waitFor } from "../support/wait.js";
import { type NodeFixture, startNodeFixture } from "./node-fixture.js";

/** A file name no test run shares, for commands a directory name would smuggle into tmux. */
const MARKER = `sa-pwned-${process.pid}-${randomBytes(3).toString("hex")}`;

/**
 * Directory names that tmux would read as formats, command separators or shell code if they were not
 * passed literally, and names that merely look odd. Each becomes a session's cwd.
 */
const NASTY_NAMES = [
  `#(touch ${MARKER})`,
  "#{session_name}",
  "#{pid}",
  "##",
  "a##b",
  "#[fg=red]x",
  "##[x]",
  "#",
  "semi;",
  ";",
  "back\\;",
  "with space",
  " lead and trail ",
  "ünïcødé 日本 🚀",
  `$(touch ${MARKER}-dollar)`,
  "-dash",
  `quote'double"`,
  "{brace}",
  "~",
  "%1",
];

/** Control characters that must never reach tmux in a path. */
const CONTROL_CHARACTERS = ["\n", "\r", "\t", "\x1b", "\x1f", "\x7f", "\x00"];

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

describe("input reaches tmux literally", () => {
  let f: NodeFixture;
  beforeAll(async () => {
    f = await startNodeFixture();
  });
  afterAll(async () => {
    await f?.close();
    // Where a command smuggled in a name would have run (the tmux client's folder): leave nothing behind.
    await rm(join(process.cwd(), MARKER), { force: true });
    await rm(join(process.cwd(), `${MARKER}-dollar`), { force: true });
  });

  const tmuxSessions = async () => (await f.tmux.run("list-sessions", "-F", "#{session_name}")).split("\n");

  it.each(NASTY_NAMES.map((name, i) => [name, i]))(
    "starts a session in a directory named %j, exactly there, running nothing else",
    async (name, i) => {
      const cwd = join(f.dir, name as string);
      await mkdir(cwd);
      const sessionId = `nasty-${i}`;
      const res = await f.sessions.createSession({ parent: "nodes/n1", sessionId, cwd, command: ["sleep", "600"] });
      expect(res.session?.cwd).toBe(cwd);
      const listed = await f.sessions.getSession({ name: `nodes/n1/sessions/${sessionId}` });
      expect(listed.session?.cwd).toBe(cwd);
      // tmux runs `#(…)` jobs in the background: a command that ran would have left its file by now.
      const pane = await f.tmux.run("display-message", "-p", "-t", `=${sessionId}:`, "#{pane_current_path}");
      expect(pane).toBe(`${cwd}\n`);
      for (const where of [f.dir, cwd]) {
        expect((await readdir(where)).filter((n) => n.startsWith(MARKER))).toEqual([]);
      }
    },
  );

  it("left no command of a directory name run anywhere once tmux settled", async () => {
    // Jobs that tmux started would finish within this wait; the marker must still be absent.
    await waitFor(async () => (await tmuxSessions()).length >= NASTY_NAMES.length, "every nasty session");
    for (const where of [f.dir, process.cwd(), f.home]) {
      expect(await exists(join(where, MARKER))).toBe(false);
      expect(await exists(join(where, `${MARKER}-dollar`))).toBe(false);
    }
  });

  it.each(CONTROL_CHARACTERS.map((c) => [JSON.stringify(c), c]))(
    "refuses a cwd containing %s with INVALID_ARGUMENT naming cwd, creating nothing",
    async (_label, c) => {
      const cwd = join(f.dir, `ctl${c}dir`);
      if (c !== "\x00") await mkdir(cwd);
      const sessionId = `ctl-${(c as string).charCodeAt(0)}`;
      const failure = await failureOf(
        f.sessions.createSession({ parent: "nodes/n1", sessionId, cwd, command: ["sleep", "600"] }),
      );
      expect(failure.code).toBe("InvalidArgument");
      expect(failure.message).toMatch(/^cwd: .*control character/);
      expect(await tmuxSessions()).not.toContain(sessionId);
    },
  );

  it.each([["staragent-hub"], ["staragent-node"], ["staragent-tailscaled"]])(
    "refuses to create %s, a name reserved for StarAgent's system sessions",
    async (sessionId) => {
      const failure = await failureOf(
        f.sessions.createSession({ parent: "nodes/n1", sessionId, cwd: f.dir, command: ["sleep", "600"] }),
      );
      expect(failure.code).toBe("InvalidArgument");
      expect(failure.message).toMatch(new RegExp(`^session_id: ${sessionId} is reserved`));
      expect(await tmuxSessions()).not.toContain(sessionId);
    },
  );
});

describe("sessions made by hand with odd names and paths", () => {
  let f: NodeFixture;
  beforeAll(async () => {
    f = await startNodeFixture();
  });
  afterAll(async () => {
    await f?.close();
  });

  it("are all listed with their exact paths; what cannot be addressed says why", async () => {
    const oddDir = join(f.dir, "line\nbreak\x1ffield\x1erecord");
    await mkdir(oddDir);
    const spaced = join(f.dir, "a b");
    await mkdir(spaced);
    await f.tmux.run("new-session", "-d", "-s", "plain", "-c", f.dir, "sleep 600");
    await f.tmux.run("new-session", "-d", "-s", "odd-path", "-c", oddDir, "sleep 600");
    await f.tmux.run("new-session", "-d", "-s", "my session ü", "-c", spaced, "sleep 600");
    // A program whose name (argv[0], what tmux reports as the pane's command) has a line break in it.
    await f.tmux.run(
      "new-session",
      "-d",
      "-s",
      "odd-command",
      "-c",
      f.dir,
      "--",
      "bash",
      "-c",
      "exec -a $'odd\\nname\\x1fhere' sleep 600",
    );
    const listed = await waitFor(async () => {
      const res = await f.sessions.listSessions({ parent: "nodes/n1" });
      const command = res.sessions.find((s) => s.tmuxSession === "odd-command")?.command;
      return command?.startsWith("odd\n") ? res : undefined;
    }, "the odd command to show");
    const byName = new Map(listed.sessions.map((s) => [s.tmuxSession, s]));
    expect([...byName.keys()].sort()).toEqual(["my session ü", "odd-command", "odd-path", "plain"]);
    expect(byName.get("odd-path")?.cwd).toBe(oddDir);
    expect(byName.get("my session ü")?.cwd).toBe(spaced);
    expect(byName.get("plain")?.cwd).toBe(f.dir);
    expect(byName.get("odd-command")?.command).toBe("odd\nname\x1fhere 600");

    expect((await f.sessions.getSession({ name: "nodes/n1/sessions/odd-path" })).session?.cwd).toBe(oddDir);
    const unaddressable = await failureOf(f.sessions.getSession({ name: "nodes/n1/sessions/my session ü" }));
    expect(unaddressable.code).toBe("InvalidArgument");
    expect(unaddressable.message).toMatch(/^name: .*rename it in tmux/);
  });
});
