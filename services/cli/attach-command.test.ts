import * as pty from "node-pty";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServerProcess, STARAGENT_BIN, startServerProcess } from "../../test/support/servers.js";
import { createTestTmux, type TestTmux } from "../../test/support/tmux.js";
import { waitFor } from "../../test/support/wait.js";

const TOKEN = "hub-token-for-attach-tests";

let tmux: TestTmux;
let hub: ServerProcess;
let cli: pty.IPty | undefined;

beforeAll(async () => {
  tmux = createTestTmux();
  hub = await startServerProcess({ kind: "hub", tmuxSocket: tmux.socketName, token: TOKEN });
  await tmux.run(
    "new-session",
    "-d",
    "-s",
    "work",
    "-x",
    "80",
    "-y",
    "24",
    "--",
    "env",
    "PS1=READY> ",
    "bash",
    "--norc",
  );
  await waitFor(async () => (await tmux.run("capture-pane", "-p", "-t", "=work:")).includes("READY>"), "the prompt");
});

afterAll(async () => {
  cli?.kill();
  await hub?.stop();
  await tmux?.close();
});

describe("staragent attach", () => {
  it("shows the session in this terminal, types, follows its size, and detaches on Ctrl-]", async () => {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      STARAGENT_URL: hub.url,
      STARAGENT_AUTH_TOKEN: TOKEN,
      TERM: "xterm-256color",
    };
    delete env.TMUX;
    const term = pty.spawn(process.execPath, [STARAGENT_BIN, "attach", "work"], { cols: 100, rows: 30, env });
    cli = term;
    let screen = "";
    term.onData((d) => {
      screen += d;
    });
    const exit = new Promise<number>((resolve) => term.onExit(({ exitCode }) => resolve(exitCode)));
    await waitFor(() => screen.includes("Ctrl-] to detach") && screen.includes("READY>"), "the attached screen");
    const size = () => tmux.run("display-message", "-p", "-t", "=work:", "#{window_width}x#{window_height}");
    await waitFor(async () => (await size()).trim() === "100x29", "the window to take this terminal's size");
    term.write("echo typed-$((3*14))\r");
    await waitFor(
      async () => (await tmux.run("capture-pane", "-p", "-t", "=work:")).includes("\ntyped-42"),
      "the typed command's output",
    );
    await waitFor(() => screen.includes("typed-42"), "the output in this terminal");
    term.resize(90, 20);
    await waitFor(async () => (await size()).trim() === "90x19", "the window to follow SIGWINCH");
    term.write("\x1d");
    expect(await exit).toBe(0);
    cli = undefined;
    expect(screen).toContain("detached");
    await waitFor(
      async () => (await tmux.client.query(["list-clients", "-t", "=work"])).trim() === "",
      "the tmux client to go",
    );
  });
});
