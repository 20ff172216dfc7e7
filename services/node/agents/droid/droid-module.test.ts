import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ProcessInfo } from "../process-table.js";
import { DroidModule } from "./droid-module.js";
import { droidUsage } from "./usage.js";

function process(argv: string[], comm = argv[0]?.split("/").pop() ?? ""): ProcessInfo {
  return { pid: 4242, ppid: 1, comm, argv, startTicks: 1 };
}

describe("Factory droid recognition", () => {
  const module = new DroidModule();

  it.each([
    ["npm's bin on PATH", ["droid"]],
    ["the package's binary by its path", ["/usr/lib/node_modules/@factory/cli/bin/droid"]],
    ["npx's copy", ["/root/.npm/_npx/4f2a/node_modules/@factory/cli/bin/droid", "--resume", "abc"]],
    ["the platform package's binary", ["/opt/node_modules/@factory/cli-linux-x64/bin/droid"], "MainThread"],
    ["its engine child", ["droid", "exec", "--input-format", "stream-jsonrpc", "--output-format", "stream-jsonrpc"]],
    ["a wrapper that execs it", ["/home/me/bin/droid"]],
  ])("recognises %s", (_what, argv, comm?: string) => {
    expect(module.recognises(process(argv, comm))).toBe(true);
  });

  it.each([
    ["another program", ["node", "/srv/app/server.js"]],
    ["an editor on a file named after it", ["vim", "droid"]],
    ["another package's binary", ["/usr/lib/node_modules/@factory/other/bin/tool"]],
  ])("does not take %s", (_what, argv) => {
    expect(module.recognises(process(argv))).toBe(false);
  });
});

describe("Factory droid usage", () => {
  it("reads the session's settings file as 0.225.2 left it after the recorded session (six model calls of 12 in, 6 out)", async () => {
    const text = await readFile(join(import.meta.dirname, "fixtures/0.225/usage.settings.json"), "utf8");
    const usage = droidUsage(text, 1_796_183_630_000.75);
    expect(usage).toMatchObject({
      model: "custom:Mock-Model-0",
      contextTokens: 12,
      totalInputTokens: 72,
      totalOutputTokens: 36,
      lastTurnTokens: 18,
      updatedAtMs: 1_796_183_630_000,
    });
  });

  it("has nothing before the first call or for a file it cannot read", () => {
    expect(droidUsage('{"tokenUsage":{"inputTokens":0,"outputTokens":0}}', 0)).toBeUndefined();
    expect(droidUsage("{not json", 0)).toBeUndefined();
  });
});
