import { describe, expect, it } from "vitest";
import type { ProcessInfo } from "../process-table.js";
import { CopilotModule } from "./copilot-module.js";

function process(argv: string[], comm = argv[0]?.split("/").pop() ?? ""): ProcessInfo {
  return { pid: 4242, ppid: 1, comm, argv, startTicks: 1 };
}

describe("Copilot CLI recognition", () => {
  const module = new CopilotModule();

  it.each([
    ["npm's bin on PATH", ["copilot"]],
    ["npm's loader under node (a pane runs `copilot`)", ["node", "/usr/lib/node_modules/.bin/copilot"]],
    ["npx's loader", ["node", "/root/.npm/_npx/4f2a/node_modules/@github/copilot/npm-loader.js", "--continue"]],
    ["the native build the loader starts", ["/opt/node_modules/@github/copilot-linux-x64/copilot"], "MainThread"],
    ["a wrapper that execs it", ["/home/me/bin/copilot", "--resume=abc"]],
  ])("recognises %s", (_what, argv, comm?: string) => {
    expect(module.recognises(process(argv, comm))).toBe(true);
  });

  it.each([
    ["another node program", ["node", "/srv/app/server.js"]],
    ["an editor on a file named after it", ["vim", "copilot"]],
    ["another package's loader", ["node", "/usr/lib/node_modules/@github/other/npm-loader.js"]],
  ])("does not take %s", (_what, argv) => {
    expect(module.recognises(process(argv))).toBe(false);
  });
});
