import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT, runProcess, type ServerProcess, startServerProcess } from "../support/servers.js";
import { createTestTmux, type TestTmux } from "../support/tmux.js";

/** The address docs/api.md uses for the Hub (`make run`'s default), replaced by the test Hub's. */
const DOCUMENTED_HUB = "http://127.0.0.1:8080";

/** What each `sh` block of docs/api.md must print, in order (the first block sets HUB and TOKEN). */
const EXPECTED_OUTPUT: RegExp[][] = [
  [/^$/],
  [
    /^staragent\.v1\.SessionService\/ListSessions$/m,
    /^grpc\.health\.v1\.Health\/Check$/m,
    /"name": "nodes\/local\/sessions\/by-hand"/,
  ],
  [/"name": "nodes\/local\/sessions\/by-hand"/, /"status": "SERVING"/],
  [/"tmuxSession": "api-demo"/, /"cwd": "\/tmp"/],
  [/"name": "nodes\/local"/, /"local": true/],
  [/"name":"nodes\/local\/sessions\/by-hand"/],
  [/^\{"code":"unauthenticated","message":"missing or invalid credentials: /],
  [/^nodes\/local\/sessions\/by-hand\t\w+\t\w+\t\//m],
];

function bash(script: string, env: NodeJS.ProcessEnv, cwd = REPO_ROOT) {
  return runProcess("bash", ["-euo", "pipefail", "-c", script], { env, cwd });
}

describe("docs/api.md, run line by line against a real Hub", () => {
  let tmux: TestTmux;
  let fakeHome: string;
  let hub: ServerProcess;
  let blocks: string[];

  beforeAll(async () => {
    blocks = [...(await readFile(join(REPO_ROOT, "docs/api.md"), "utf8")).matchAll(/```sh\n([\s\S]*?)```/g)].map(
      (m) => m[1] ?? "",
    );
    tmux = createTestTmux();
    fakeHome = await mkdtemp(join(tmpdir(), "sa-docs-home-"));
    await mkdir(join(fakeHome, ".staragent"));
    await tmux.run("new-session", "-d", "-s", "by-hand", "sleep 600");
    // No STARAGENT_AUTH_TOKEN: the Hub generates ~/.staragent/auth_token, which the docs read.
    hub = await startServerProcess({
      kind: "hub",
      tmuxSocket: tmux.socketName,
      token: "",
      home: join(fakeHome, ".staragent"),
      env: { STARAGENT_AUTH_TOKEN: "" },
    });
  });
  afterAll(async () => {
    await hub?.stop();
    await tmux?.close();
    await rm(fakeHome, { recursive: true, force: true });
  });

  it("has the blocks this test knows", () => {
    expect(blocks).toHaveLength(EXPECTED_OUTPUT.length);
    expect(blocks[0]).toContain(DOCUMENTED_HUB);
  });

  it.each(EXPECTED_OUTPUT.map((expected, i) => [i, expected] as const))(
    "block %i runs and prints what it should",
    async (i, expected) => {
      const setup = (blocks[0] ?? "").replace(DOCUMENTED_HUB, hub.url);
      const result = await bash(`${setup}\n${i === 0 ? "" : blocks[i]}`, {
        HOME: fakeHome,
        STARAGENT_HOME: "",
        STARAGENT_AUTH_TOKEN: "",
        STARAGENT_URL: "",
        // npx may print a "new npm version" notice on stderr; it is not the documented command's output.
        npm_config_update_notifier: "false",
      });
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      for (const pattern of expected) expect(result.stdout).toMatch(pattern);
    },
  );

  it("the README's curl login runs as written", async () => {
    const readme = await readFile(join(REPO_ROOT, "README.md"), "utf8");
    const login = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)]
      .map((m) => m[1] ?? "")
      .filter((b) => b.includes("cookies.txt"));
    expect(login).toHaveLength(1);
    const script = (login[0] ?? "").replaceAll(DOCUMENTED_HUB, hub.url);
    const result = await bash(script, { HOME: fakeHome, STARAGENT_HOME: "" }, fakeHome);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/"name":"nodes\/local\/sessions\/by-hand"/);
  });

  it("the grpc-js script in the guide runs as written", async () => {
    const guide = await readFile(join(REPO_ROOT, "docs/api.md"), "utf8");
    const scripts = [...guide.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1] ?? "");
    expect(scripts).toHaveLength(1);
    const file = join(REPO_ROOT, ".tmp", `docs-grpc-js-${process.pid}.mjs`);
    await mkdir(join(REPO_ROOT, ".tmp"), { recursive: true });
    await writeFile(file, (scripts[0] ?? "").replace("127.0.0.1:8080", new URL(hub.url).host));
    try {
      const token = (await readFile(join(fakeHome, ".staragent", "auth_token"), "utf8")).trim();
      const result = await bash(`node ${JSON.stringify(file)}`, { STARAGENT_AUTH_TOKEN: token });
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      expect(result.stdout).toContain("'nodes/local/sessions/by-hand'");
    } finally {
      await rm(file, { force: true });
    }
  });

  it("the grpc-js example reports a wrong token as UNAUTHENTICATED and exits 1", async () => {
    const result = await bash("node examples/list-sessions.mjs", {
      STARAGENT_URL: hub.url,
      STARAGENT_AUTH_TOKEN: "wrong-token",
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^ListSessions failed: UNAUTHENTICATED: missing or invalid credentials/);
  });
});
