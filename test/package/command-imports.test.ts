import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  REPO_ROOT,
  runCli,
  runProcess,
  type ServerProcess,
  STARAGENT_BIN,
  startServerProcess,
} from "../support/servers.js";
import { createTestTmux, type TestTmux } from "../support/tmux.js";

const TOKEN = "command-imports-token";
const TRACER = join(REPO_ROOT, "test/support/import-trace.mjs");
const DIST = join(REPO_ROOT, "dist");

/**
 * What `staragent ls` must never load: the Node's machine backend (terminal, status engine, agents),
 * the Hub's server, the native modules.
 */
const NOT_FOR_CLIENTS = [
  /^services\/node\//,
  /^services\/hub\//,
  /node_modules\/node-pty\//,
  /node_modules\/better-sqlite3\//,
];

/**
 * The source files behind the files a process loaded: for each compiled file in dist/ (a bundle chunk),
 * the sources its source map names; any other file (one node's resolver found in node_modules) as is.
 * All relative to the repository, sorted.
 */
async function sourcesOf(files: Iterable<string>): Promise<string[]> {
  const out = new Set<string>();
  for (const file of files) {
    if (!file.startsWith(`${DIST}/`)) {
      out.add(relative(REPO_ROOT, file));
      continue;
    }
    const map: { sources: string[] } = JSON.parse(await readFile(`${file}.map`, "utf8"));
    for (const source of map.sources) out.add(relative(REPO_ROOT, resolve(dirname(file), source)));
  }
  return [...out].sort();
}

/**
 * Runs the compiled command with the import tracer; returns what it printed and the sources of every
 * file it loaded (node's built-in modules left out).
 */
async function traced(args: string[], env: NodeJS.ProcessEnv, dir: string) {
  const trace = join(dir, `trace-${args.join("-").replace(/\W+/g, "_")}.txt`);
  const result = await runProcess(process.execPath, ["--import", TRACER, STARAGENT_BIN, ...args], {
    env: { ...env, STARAGENT_IMPORT_TRACE: trace },
  });
  const loaded = new Set(
    (await readFile(trace, "utf8"))
      .split("\n")
      .filter((l) => l.startsWith("file:") || l.startsWith("/"))
      .map((l) => (l.startsWith("file:") ? fileURLToPath(l) : l)),
  );
  loaded.delete(TRACER);
  return { ...result, loaded: await sourcesOf(loaded) };
}

describe("what each command loads (the compiled command, traced)", () => {
  let tmux: TestTmux;
  let dir: string;
  let hub: ServerProcess | undefined;
  beforeAll(async () => {
    tmux = createTestTmux();
    dir = await mkdtemp(join(tmpdir(), "sa-imports-"));
    hub = await startServerProcess({ kind: "hub", tmuxSocket: tmux.socketName, token: TOKEN });
  });
  afterAll(async () => {
    await hub?.stop();
    await tmux?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("--help loads the command table and nothing else: no package, no command module", async () => {
    const help = await traced(["--help"], {}, dir);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: staragent/);
    expect(help.loaded).toEqual(["services/bin/staragent.ts", "services/cli/main.ts", "services/common/config.ts"]);
  });

  it("ls against a running Hub loads the client and the generated code, not the machine backend, the servers or the native modules", async () => {
    if (!hub) throw new Error("no Hub");
    const env = { STARAGENT_URL: hub.url, STARAGENT_AUTH_TOKEN: TOKEN, STARAGENT_HOME: hub.home };
    const created = await runCli(["new", "traced", "--cwd", dir, "--", "sh"], env);
    expect(created).toMatchObject({ code: 0, stdout: "created nodes/local/sessions/traced\n" });
    const ls = await traced(["ls"], env, dir);
    expect(ls.stderr).toBe("");
    expect(ls.code).toBe(0);
    expect(ls.stdout).toMatch(/^traced\s/m);
    expect(ls.loaded).toEqual(
      expect.arrayContaining([
        "services/cli/ls-command.ts",
        "services/cli/client.ts",
        "gen/staragent/v1/session_service_pb.ts",
      ]),
    );
    expect(ls.loaded.filter((f) => NOT_FOR_CLIENTS.some((p) => p.test(f)))).toEqual([]);
  });

  it("the tracer sees what ls must not load where a command loads it (hub --help: backend, servers, native modules)", async () => {
    const hubHelp = await traced(["hub", "--help"], {}, dir);
    expect(hubHelp.code).toBe(0);
    for (const pattern of NOT_FOR_CLIENTS) expect(hubHelp.loaded.filter((f) => pattern.test(f))).not.toEqual([]);
    expect(hubHelp.loaded).toEqual(
      expect.arrayContaining(["services/node/terminal/pty-attachment.ts", "services/node/status/engine.ts"]),
    );
  });
});
