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
  /** The fresh clone the package is made in. */
  let source: string;
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
    // From a clean tree, as a person with a fresh clone does it: `git clone` of this commit, then
    // `make package` alone (its npm ci, its dashboard and services builds), so nothing already built
    // in the working tree (web/dist, dist/) can stand in for what the package must build itself.
    source = join(work, "source");
    const clone = await runProcess("git", ["clone", "--quiet", REPO_ROOT, source], { cwd: work });
    if (clone.code !== 0) throw new Error(`git clone failed:\n${clone.stderr}`);
    const make = await runProcess("make", ["--no-print-directory", "package"], {
      cwd: source,
      env: { ...(await installEnv(work)), MAKEFLAGS: "", MAKELEVEL: "" },
    });
    if (make.code !== 0) throw new Error(`make package failed:\n${make.stdout}\n${make.stderr}`);
    const tarballs = (await readdir(source)).filter((f) => /^staragent-.*\.tgz$/.test(f));
    if (tarballs.length !== 1) throw new Error(`make package left ${tarballs.length} tarballs: ${tarballs}`);
    const tarball = join(source, tarballs[0] ?? "");
    const list = await runProcess("tar", ["-tzf", tarball], { cwd: work });
    if (list.code !== 0) throw new Error(`tar failed:\n${list.stderr}`);
    packed = list.stdout
      .split("\n")
      .filter((f) => f !== "" && !f.endsWith("/"))
      .map((f) => f.replace(/^package\//, ""));
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
        tarball,
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
    const built = (await readdir(join(source, "dist"), { recursive: true, withFileTypes: true }))
      .filter((e) => e.isFile())
      .map((e) => relative(source, join(e.parentPath, e.name)));
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
        "web/dist/index.html",
        expect.stringMatching(/^web\/dist\/assets\/.+\.js$/),
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
    const built: { commit: string } = JSON.parse(await readFile(join(source, "dist/build-info.json"), "utf8"));
    // Built in a clean clone of this commit: never dirty.
    expect(built.commit).toMatch(/^[0-9a-f]{12}$/);
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

    // The installed Hub serves the built dashboard at /, not the placeholder it shows without one.
    const login = await fetch(`${hub.url}/login`, {
      method: "POST",
      body: new URLSearchParams({ token: USER_TOKEN }),
      redirect: "manual",
    });
    expect(login.status).toBe(303);
    const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
    expect(cookie).toMatch(/^staragent_session=/);
    const page = await fetch(`${hub.url}/`, { headers: { cookie }, redirect: "manual" });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).not.toContain("The dashboard has not been built");
    const script = /<script type="module"[^>]* src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(script, html).toBeDefined();
    const asset = await fetch(`${hub.url}${script}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
  });
});
