import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { REPO_ROOT, runProcess } from "../support/servers.js";

/** `make lint`'s dependency rules (DESIGN.md §2), run as make runs them. */
const CHECKER = join(REPO_ROOT, "scripts/check-imports.mjs");

/** Runs the checker over `root`. */
function check(root: string) {
  return runProcess(process.execPath, [CHECKER, root]);
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
  "web/src/x.ts":
    '// import { hub } from "../../services/hub/main.js";\nexport const x = "import(\\"../../services/hub/main.js\\")";\n',
};

async function writeTree(root: string, files: Record<string, string>): Promise<void> {
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), text);
  }
}

describe("the import direction check (scripts/check-imports.mjs)", () => {
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
    expect(result).toMatchObject({ code: 0, stdout: "", stderr: "" });
  });

  it.each([
    {
      what: "cli importing the Hub",
      file: "services/cli/hub-command.ts",
      text: 'export { hub } from "../hub/main.js";\n',
      line: "services/cli/hub-command.ts:1: imports '../hub/main.js' (cli → hub): cli imports only gen/ and services/common/",
    },
    {
      what: "the Hub importing the Node past its entry point (dynamic import)",
      file: "services/hub/routes.ts",
      text: '// routes\nexport const load = () => import("../node/machine.js");\n',
      line: "services/hub/routes.ts:2: imports '../node/machine.js' (hub → node): hub imports the Node only through its entry point (services/node/index.ts), and gen/ and services/common/",
    },
    {
      what: "the Node importing the Hub (a type import counts)",
      file: "services/node/uses-hub.ts",
      text: 'import type { hub } from "../hub/main.js";\nexport type H = typeof hub;\n',
      line: "services/node/uses-hub.ts:1: imports '../hub/main.js' (node → hub): node imports only gen/ and services/common/, never hub",
    },
    {
      what: "common importing the Node",
      file: "services/common/uses-node.ts",
      text: 'import { machine } from "../node/index.js";\nexport const m = machine;\n',
      line: "services/common/uses-node.ts:1: imports '../node/index.js' (common → node-entry): common imports only gen/ (neither hub nor node)",
    },
    {
      what: "the dashboard importing services/",
      file: "web/src/names.ts",
      text: 'import { n } from "../../services/common/names.js";\nexport const names = n;\n',
      line: "web/src/names.ts:1: imports '../../services/common/names.js' (web → common): web imports only gen/ (and its own files and npm packages)",
    },
    {
      what: "services code importing test/",
      file: "services/node/viewer.ts",
      text: 'import { waitFor } from "../../test/support/wait.js";\nexport const v = waitFor;\n',
      line: "services/node/viewer.ts:1: imports '../../test/support/wait.js' (node → test): nothing under services/ imports test/ except *.test.ts files (test-only code lives under test/)",
    },
  ])("fails on $what, naming the file, the line and the rule", async ({ file, text, line }) => {
    await writeTree(root, { [file]: text });
    const result = await check(root);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toBe(`${line}\n1 import(s) against the dependency rules (DESIGN.md §2)\n`);
  });

  it("passes the repository as it is", async () => {
    const result = await check(REPO_ROOT);
    expect(result).toMatchObject({ code: 0, stderr: "" });
  });
});
