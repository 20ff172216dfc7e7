import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { REPO_ROOT, runProcess } from "../support/servers.js";

/** `make lint`'s dependency rules (.dependency-cruiser.cjs), run as make runs them. */
const DEPCRUISE = join(REPO_ROOT, "node_modules/.bin/depcruise");
const CONFIG = join(REPO_ROOT, ".dependency-cruiser.cjs");

/** Runs dependency-cruiser with the repository's rules over the tree at `root`, as `make lint` does. */
function check(root: string) {
  return runProcess(DEPCRUISE, ["--config", CONFIG, "--output-type", "err", "services", "web"], { cwd: root });
}

/** A tree that keeps every rule: each area importing what it may. */
const ALLOWED: Record<string, string> = {
  "gen/staragent/v1/session_pb.ts": "export const Cli = {};\n",
  "services/common/names.ts": 'import { Cli } from "../../gen/staragent/v1/session_pb.js";\nexport const n = Cli;\n',
  "services/node/index.ts": 'export { machine } from "./machine.js";\n',
  "services/node/machine.ts":
    'import { n } from "../common/names.js";\nimport { spawn } from "node:child_process";\nexport const machine = [n, spawn];\n',
  "services/hub/main.ts":
    'import { machine } from "../node/index.js";\nimport type { n } from "../common/names.js";\nexport const hub = machine;\n',
  "services/cli/main.ts":
    'import { n } from "../common/names.js";\nimport { createClient } from "@connectrpc/connect";\nexport const cli = [n, createClient];\n',
  "services/bin/staragent.ts":
    'await import("../cli/main.js");\nawait import("../hub/main.js");\nawait import("../node/machine.js");\n',
  // A test next to the code may use the shared test support.
  "services/node/machine.test.ts": 'import { waitFor } from "../../test/support/wait.js";\nexport const w = waitFor;\n',
  "test/support/wait.ts": "export const waitFor = 1;\n",
  "web/src/app.ts":
    'import { Cli } from "../../gen/staragent/v1/session_pb.js";\nimport { LitElement } from "lit";\nimport { x } from "./x.js";\nexport const app = [Cli, LitElement, x];\n',
  // Inside the Node: an agent module builds on the chat parser contract, chat uses the registry,
  // status the agent contract, the terminal tmux.
  "services/node/chat/chat-parser.ts": "export interface ChatParser { x: number }\n",
  "services/node/chat/screen-lines.ts": "export const lines = 1;\n",
  "services/node/agents/agent.ts":
    'import type { ChatParser } from "../chat/chat-parser.js";\nexport type Agent = ChatParser;\n',
  "services/node/agents/claude/claude-module.ts":
    'import { lines } from "../../chat/screen-lines.js";\nimport type { Agent } from "../agent.js";\nexport const claude: Agent = { x: lines };\n',
  "services/node/agents/registry.ts":
    'import { claude } from "./claude/claude-module.js";\nexport const registry = [claude];\n',
  "services/node/chat/parser-registry.ts":
    'import { registry } from "../agents/registry.js";\nexport const parsers = registry;\n',
  "services/node/status/engine.ts": 'import type { Agent } from "../agents/agent.js";\nexport type Engine = Agent;\n',
  "services/node/tmux/client.ts": 'import { n } from "../../common/names.js";\nexport const tmux = n;\n',
  "services/node/terminal/attach.ts": 'import { tmux } from "../tmux/client.js";\nexport const attach = tmux;\n',
  "web/src/x.ts":
    '// import { hub } from "../../services/hub/main.js";\nexport const x = "import(\\"../../services/hub/main.js\\")";\n',
};

async function writeTree(root: string, files: Record<string, string>): Promise<void> {
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), text);
  }
}

/** dependency-cruiser's one-line summary of a failed run with `count` errors. */
const FAILED = (count: number) => new RegExp(`x ${count} dependency violations \\(${count} errors, 0 warnings\\)`);

describe("the import direction check (dependency-cruiser, .dependency-cruiser.cjs)", () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "sa-imports-check-"));
    await writeTree(root, ALLOWED);
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("passes a tree where every import points the allowed way (comments and strings that look like imports ignored)", async () => {
    const result = await check(root);
    expect(result.stderr).toBe("");
    expect(result.stdout).toMatch(/no dependency violations found/);
    expect(result.code).toBe(0);
  });

  it.each([
    {
      what: "cli importing the Hub",
      file: "services/cli/hub-command.ts",
      text: 'export { hub } from "../hub/main.js";\n',
      line: "error cli-imports-only-gen-and-common: services/cli/hub-command.ts → services/hub/main.ts",
    },
    {
      what: "the Hub importing the Node past its entry point (dynamic import)",
      file: "services/hub/routes.ts",
      text: '// routes\nexport const load = () => import("../node/machine.js");\n',
      line: "error hub-imports-node-only-through-its-entry: services/hub/routes.ts → services/node/machine.ts",
    },
    {
      what: "the Node importing the Hub (a type import counts)",
      file: "services/node/uses-hub.ts",
      text: 'import type { hub } from "../hub/main.js";\nexport type H = typeof hub;\n',
      line: "error node-never-imports-hub: services/node/uses-hub.ts → services/hub/main.ts",
    },
    {
      what: "common importing the Node",
      file: "services/common/uses-node.ts",
      text: 'import { machine } from "../node/index.js";\nexport const m = machine;\n',
      line: "error common-imports-only-gen: services/common/uses-node.ts → services/node/index.ts",
    },
    {
      what: "the dashboard importing services/",
      file: "web/src/names.ts",
      text: 'import { n } from "../../services/common/names.js";\nexport const names = n;\n',
      line: "error web-imports-only-gen: web/src/names.ts → services/common/names.ts",
    },
    {
      what: "services code importing test/",
      file: "services/node/viewer.ts",
      text: 'import { waitFor } from "../../test/support/wait.js";\nexport const v = waitFor;\n',
      line: "error services-never-import-test: services/node/viewer.ts → test/support/wait.ts",
    },
    {
      what: "a relative import of a file that does not exist",
      file: "services/common/missing.ts",
      text: 'import { gone } from "./gone.js";\nexport const m = gone;\n',
      line: "error imports-resolve-inside-the-repository: services/common/missing.ts → ./gone.js",
    },
    {
      what: "status reaching up into the machine",
      file: "services/node/status/loop.ts",
      text: 'import { machine } from "../machine.js";\nexport const loop = machine;\n',
      line: "error node-status-does-not-reach-up: services/node/status/loop.ts → services/node/machine.ts",
    },
    {
      what: "an agent module using chat past the parser contract",
      file: "services/node/agents/codex/codex-module.ts",
      text: 'import { parsers } from "../../chat/parser-registry.js";\nexport const codex = parsers;\n',
      line: "error node-agents-use-only-the-chat-parser-contract: services/node/agents/codex/codex-module.ts → services/node/chat/parser-registry.ts",
    },
    {
      what: "chat naming one CLI's module folder instead of the registry",
      file: "services/node/chat/claude-chat.ts",
      text: 'import { claude } from "../agents/claude/claude-module.js";\nexport const c = claude;\n',
      line: "error node-uses-agents-only-through-the-contract: services/node/chat/claude-chat.ts → services/node/agents/claude/claude-module.ts",
    },
    {
      what: "tmux importing another part of the Node",
      file: "services/node/tmux/uses-status.ts",
      text: 'import type { Engine } from "../status/engine.js";\nexport type E = Engine;\n',
      line: "error node-tmux-and-store-are-leaves: services/node/tmux/uses-status.ts → services/node/status/engine.ts",
    },
    {
      what: "the terminal importing chat",
      file: "services/node/terminal/chat-view.ts",
      text: 'import { lines } from "../chat/screen-lines.js";\nexport const v = lines;\n',
      line: "error node-terminal-and-system-use-only-tmux: services/node/terminal/chat-view.ts → services/node/chat/screen-lines.ts",
    },
  ])("fails on $what, naming the rule and the import", async ({ file, text, line }) => {
    await writeTree(root, { [file]: text });
    const result = await check(root);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe("");
    expect(result.stdout.split("\n").filter((l) => l.includes("error "))).toEqual([`  ${line}`]);
    expect(result.stdout).toMatch(FAILED(1));
  });

  it("fails on a new file cycle (type-only imports count), naming the rule and the files of the cycle", async () => {
    await writeTree(root, {
      "services/node/tmux/panes.ts": 'import type { Client } from "./client-types.js";\nexport type Pane = Client;\n',
      "services/node/tmux/client-types.ts":
        'import type { Pane } from "./panes.js";\nexport type Client = { pane?: Pane };\n',
    });
    const result = await check(root);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(
      /error no-file-cycles: services\/node\/tmux\/(panes|client-types)\.ts → \n\s+services\/node\/tmux\/(client-types|panes)\.ts →\n\s+services\/node\/tmux\/(panes|client-types)\.ts/,
    );
    expect(result.stdout).toMatch(FAILED(1));
  });

  it("passes the repository as it is", async () => {
    const result = await check(REPO_ROOT);
    expect(result.stderr).toBe("");
    expect(result.stdout).toMatch(/no dependency violations found/);
    expect(result.code).toBe(0);
  });
});
