import { constants } from "node:fs";
import { access, mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT, runProcess, type ServerProcess, startServerProcess } from "../support/servers.js";
import { createTestTmux, type TestTmux } from "../support/tmux.js";

/**
 * How long packing and installing may take: the install compiles node-pty and better-sqlite3 (SQLite
 * itself) from source, about 4 minutes on a busy 2-core machine without a warm compiler cache, 10 to
 * 20 seconds with one.
 */
const INSTALL_TIMEOUT_MS = 600_000;
/** The packages whose install scripts (native builds) the install allows, as docs/operations.md says. */
const NATIVE_PACKAGES = ["better-sqlite3", "node-pty"];
const USER_TOKEN = "package-test-user-token";
const NODE_TOKEN = "package-test-node-token";

/** An executable named `name` on PATH, if any. */
async function onPath(name: string): Promise<string | undefined> {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    const file = join(dir, name);
    const found = await access(file, constants.X_OK).then(
      () => true,
      () => false,
    );
    if (found) return file;
  }
  return undefined;
}

/**
 * The environment of `npm install`. With ccache present (`make test` installs it), the compilers run
 * through it, so the native builds compile for real once and are cache hits after that; the base
 * folder lets a fresh temporary prefix reuse objects compiled under another one.
 */
async function installEnv(work: string): Promise<NodeJS.ProcessEnv> {
  const env: NodeJS.ProcessEnv = { npm_config_update_notifier: "false" };
  if (await onPath("ccache")) {
    env.CC = `ccache ${process.env.CC ?? "cc"}`;
    env.CXX = `ccache ${process.env.CXX ?? "g++"}`;
    env.CCACHE_BASEDIR = work;
    env.CCACHE_NOHASHDIR = "1";
  }
  return env;
}

describe("the npm package, installed into an empty prefix and run from outside the repository", () => {
  let work: string;
  let prefix: string;
  let packed: string[] = [];
  let installed: string;
  const servers: ServerProcess[] = [];
  const tmuxes: TestTmux[] = [];
  /** The installed command, found on PATH as a user would run it. */
  const staragent = (args: string[], env: NodeJS.ProcessEnv = {}) =>
    runProcess("staragent", args, {
      cwd: work,
      env: { PATH: `${join(prefix, "bin")}${delimiter}${process.env.PATH ?? ""}`, ...env },
    });

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), "sa-package-"));
    prefix = join(work, "prefix");
    // dist/ is current (vitest's global setup built it). npm pack's prepack would build it again and
    // rebuild web/dist under the dashboard tests running beside this one, so it is skipped here.
    const pack = await runProcess("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", work], {
      cwd: REPO_ROOT,
      env: { npm_config_update_notifier: "false" },
    });
    if (pack.code !== 0) throw new Error(`npm pack failed:\n${pack.stderr}`);
    const [info] = JSON.parse(pack.stdout) as { filename: string; files: { path: string }[] }[];
    if (!info) throw new Error(`npm pack printed no package:\n${pack.stdout}`);
    packed = info.files.map((f) => f.path);
    const install = await runProcess(
      "npm",
      [
        "install",
        "--global",
        "--prefix",
        prefix,
        "--prefer-offline",
        "--no-audit",
        "--no-fund",
        `--allow-scripts=${NATIVE_PACKAGES.join(",")}`,
        join(work, info.filename),
      ],
      { cwd: work, env: await installEnv(work) },
    );
    if (install.code !== 0) throw new Error(`npm install of the package failed:\n${install.stderr}`);
    installed = join(prefix, "lib/node_modules/staragent");
  }, INSTALL_TIMEOUT_MS);

  afterAll(async () => {
    for (const s of servers) await s.stop();
    for (const t of tmuxes) await t.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it("holds the whole build (the bundled command with its source maps, the compiled generated code), the generated code and the protos; no sources or tests", async () => {
    const built = (await readdir(join(REPO_ROOT, "dist"), { recursive: true, withFileTypes: true }))
      .filter((e) => e.isFile())
      .map((e) => relative(REPO_ROOT, join(e.parentPath, e.name)));
    expect(packed.filter((f) => f.startsWith("dist/")).sort()).toEqual(built.sort());
    expect(packed).toEqual(
      expect.arrayContaining([
        "package.json",
        "README.md",
        "docs/operations.md",
        "dist/build-info.json",
        "dist/staragent.js",
        "dist/staragent.js.map",
        expect.stringMatching(/^dist\/chunks\/ls-command-\w+\.js$/),
        "dist/gen/staragent/v1/session_service_pb.js",
        "gen/staragent/v1/session_service_pb.ts",
        "proto/staragent/v1/session_service.proto",
        "proto/staragent/v1/terminal_stream.proto",
      ]),
    );
    expect(packed.filter((f) => /^(services|test|bench|scripts|web\/(?!dist\/))\//.test(f))).toEqual([]);
  });

  it("installs its runtime dependencies, native builds included, and no TypeScript loader", async () => {
    const deps = await readdir(join(installed, "node_modules"));
    expect(deps).toEqual(expect.arrayContaining(["@bufbuild", "@connectrpc", ...NATIVE_PACKAGES]));
    for (const dev of ["tsx", "esbuild", "typescript", "vitest"]) expect(deps).not.toContain(dev);
    await access(join(installed, "node_modules/node-pty/build/Release/pty.node"));
    await access(join(installed, "node_modules/better-sqlite3/build/Release/better_sqlite3.node"));
  });

  it("staragent --version prints the version, the commit it was built from and the contract", async () => {
    const built: { commit: string } = JSON.parse(await readFile(join(REPO_ROOT, "dist/build-info.json"), "utf8"));
    expect(built.commit).toMatch(/^[0-9a-f]{12}(-dirty)?$/);
    const version = await staragent(["--version"]);
    expect(version).toEqual({
      code: 0,
      stdout: `staragent 0.1.0 (commit ${built.commit}, contract staragent.v1)\n`,
      stderr: "",
    });
  });

  it("starts a Hub and a Node that list a session created through them", async () => {
    const bin = join(prefix, "bin/staragent");
    const nodeTmux = createTestTmux();
    const hubTmux = createTestTmux();
    tmuxes.push(nodeTmux, hubTmux);
    const node = await startServerProcess({
      kind: "node",
      bin,
      cwd: work,
      tmuxSocket: nodeTmux.socketName,
      token: NODE_TOKEN,
      args: ["--name", "w1"],
    });
    servers.push(node);
    const hub = await startServerProcess({
      kind: "hub",
      bin,
      cwd: work,
      tmuxSocket: hubTmux.socketName,
      token: USER_TOKEN,
      args: ["--node", `w1=${node.url}`],
      env: { STARAGENT_NODE_TOKEN: NODE_TOKEN },
    });
    servers.push(hub);
    const client = { STARAGENT_URL: hub.url, STARAGENT_AUTH_TOKEN: USER_TOKEN, STARAGENT_HOME: hub.home };

    const created = await staragent(["new", "work", "--node", "w1", "--cwd", work, "--", "sleep", "600"], client);
    expect(created).toEqual({ code: 0, stdout: "created nodes/w1/sessions/work\n", stderr: "" });
    const ls = await staragent(["ls"], client);
    expect(ls.stderr).toBe("");
    expect(ls.code).toBe(0);
    expect(ls.stdout).toMatch(/^SESSION\s+STATUS/);
    expect(ls.stdout).toMatch(/^w1\/work\s+idle\s/m);
    const json = await staragent(["ls", "--json", "--node", "w1"], client);
    expect(JSON.parse(json.stdout)).toMatchObject({
      sessions: [{ name: "nodes/w1/sessions/work", node: "w1", tmuxSession: "work", cwd: work }],
      unreachable: [],
    });
    expect(await nodeTmux.run("list-sessions", "-F", "#{session_name}")).toBe("work\n");
  });
});
