import { mkdir, mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SessionService } from "../../gen/staragent/v1/session_service_pb.js";
import { TerminalStream } from "../../gen/staragent/v1/terminal_stream_pb.js";
import { grpcClient, testToken } from "../foundation/hub-fixture.js";
import { type ServerProcess, startServerProcess } from "../support/servers.js";
import { TestViewer } from "../support/test-viewer.js";
import { createTestTmux, type TestTmux } from "../support/tmux.js";
import { waitFor } from "../support/wait.js";

/** Every variable that selects a locale, unset (spawn drops undefined values). */
const NO_LOCALE = { LANG: undefined, LANGUAGE: undefined, LC_ALL: undefined, LC_CTYPE: undefined };

/** Environments without a UTF-8 locale, as a Node started by a service manager may have. */
const LOCALES: Array<[string, NodeJS.ProcessEnv]> = [
  ["no locale variable at all", { ...NO_LOCALE }],
  ["LANG=C", { ...NO_LOCALE, LANG: "C" }],
];

/** A directory name beyond ASCII: under a non-UTF-8 locale tmux would print it as underscores. */
const UNICODE_DIR = "ünï 日本";

describe("a Node and its tmux server without a UTF-8 locale", () => {
  let tmux: TestTmux | undefined;
  let node: ServerProcess | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await node?.stop();
    await tmux?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it.each(LOCALES)("lists, creates and attaches sessions with %s", async (_what, locale) => {
    const env = { ...process.env, ...locale };
    for (const key of Object.keys(locale)) if (locale[key] === undefined) delete env[key];
    dir = await realpath(await mkdtemp(join(tmpdir(), "sa-locale-")));
    const cwd = join(dir, UNICODE_DIR);
    await mkdir(cwd);
    // The tmux server starts under the same locale (its first client's environment).
    tmux = createTestTmux(env);
    await tmux.run("new-session", "-d", "-s", "by-hand", "-c", cwd, "sleep 600");
    node = await startServerProcess({
      kind: "node",
      tmuxSocket: tmux.socketName,
      token: testToken(),
      args: ["--name", "n1"],
      env: locale,
    });
    const sessions = grpcClient(SessionService, node.url, node.token);

    const listed = await sessions.listSessions({ parent: "nodes/n1" });
    expect(listed.sessions.map((s) => [s.tmuxSession, s.cwd])).toEqual([["by-hand", cwd]]);

    const created = await sessions.createSession({
      parent: "nodes/n1",
      sessionId: "made",
      cwd,
      command: ["sh", "-c", "printf '%s\\n' 'wörld 日本 ✓'; exec sleep 600"],
    });
    expect(created.session?.cwd).toBe(cwd);
    expect((await sessions.listSessions({ parent: "nodes/n1" })).sessions.map((s) => s.tmuxSession)).toEqual([
      "by-hand",
      "made",
    ]);

    // The terminal's tmux client writes UTF-8 too, whatever the locale.
    const viewer = await TestViewer.attach(grpcClient(TerminalStream, node.url, node.token), {
      name: "nodes/n1/sessions/made",
      cols: 80,
      rows: 24,
    });
    try {
      await waitFor(() => viewer.text.includes("wörld 日本 ✓"), "the UTF-8 line on the terminal");
    } finally {
      await viewer.close();
    }
  });
});
