import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type HubFixture, startHubFixture } from "../foundation/hub-fixture.js";
import { runProcess, STARAGENT_BIN } from "../support/servers.js";
import { waitFor } from "../support/wait.js";

/** A folder name as a cloned repository could have it: OSC 52 (writes the clipboard), a newline, RLO. */
const HOSTILE = "repo\x1b]52;c;cm0gLXJmIH4=\x07\nforged-row idle\u202etxt.exe";
/** What a terminal acts on: no byte of it may reach the terminal from `staragent`. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
const ACTED_ON = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

describe("the staragent command prints text from outside safely", () => {
  let f: HubFixture;
  let dir: string;
  beforeAll(async () => {
    f = await startHubFixture();
    dir = join(f.dir, HOSTILE);
    await mkdir(dir);
    await f.tmux.run("new-session", "-d", "-s", "hostile", "-c", dir, "--", "sleep", "600");
    await waitFor(
      async () => (await f.sessions.listSessions({})).sessions.some((s) => s.tmuxSession === "hostile"),
      "the session to be listed",
    );
  });
  afterAll(async () => {
    await f?.close();
  });

  const cli = (...args: string[]) => runProcess(process.execPath, [STARAGENT_BIN, ...args], { env: f.cliEnv });

  it("ls shows the folder's controls escaped, one line per session; --json keeps the path exactly", async () => {
    const table = await cli("ls");
    expect(table.code).toBe(0);
    expect(table.stdout).not.toMatch(ACTED_ON);
    const lines = table.stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain("repo\\e]52;c;cm0gLXJmIH4=\\x07\\nforged-row idle\\u202etxt.exe");
    const json = await cli("ls", "--json");
    const sessions = (JSON.parse(json.stdout) as { sessions: { cwd: string }[] }).sessions;
    expect(sessions.map((s) => s.cwd)).toEqual([dir]);
  });

  it("a Hub's error text reaches stderr escaped, bidi controls too", async () => {
    const failed = await cli("stop", HOSTILE.replace(/\n/g, ""));
    expect(failed.code).not.toBe(0);
    expect(failed.stderr).not.toMatch(ACTED_ON);
    // The Hub quotes the name (its JSON escapes the C0 controls); the right-to-left override is the CLI's.
    expect(failed.stderr).toContain("idle\\u202etxt.exe");
  });
});
