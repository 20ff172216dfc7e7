import { describe, expect, it } from "vitest";
import type { ProcessInfo } from "../process-table.js";
import { PiModule } from "./pi-module.js";

function process(argv: string[], comm = argv[0]?.split("/").pop() ?? ""): ProcessInfo {
  return { pid: 4242, ppid: 1, comm, argv, startTicks: 1 };
}

describe("pi recognition", () => {
  const module = new PiModule();

  it.each([
    ["npm's bin on PATH", ["pi"]],
    ["npm's bin under node (a pane runs `pi`)", ["node", "/usr/lib/node_modules/.bin/pi", "--continue"]],
    ["the package's script under node", ["node", "/usr/lib/node_modules/@mariozechner/pi-coding-agent/dist/cli.js"]],
    ["npx's copy", ["node", "/root/.npm/_npx/9c1e/node_modules/@mariozechner/pi-coding-agent/dist/cli.js", "-c"]],
    ["a wrapper that execs it", ["/home/me/bin/pi", "--session", "01a234dc"]],
  ])("recognises %s", (_what, argv) => {
    expect(module.recognises(process(argv))).toBe(true);
  });

  it.each([
    ["another node program", ["node", "/srv/app/server.js"]],
    ["an editor on a file named after it", ["vim", "pi"]],
    ["another package's cli.js", ["node", "/usr/lib/node_modules/@other/agent/dist/cli.js"]],
  ])("does not take %s", (_what, argv) => {
    expect(module.recognises(process(argv))).toBe(false);
  });
});
