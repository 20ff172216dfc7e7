import { describe, expect, it } from "vitest";
import { Cli } from "../../../../gen/staragent/v1/session_pb.js";
import type { ProcessInfo } from "../process-table.js";
import { KiloModule, kiloDbPath } from "./kilo-module.js";

function process(argv: string[], comm = argv[0]?.split("/").pop() ?? ""): ProcessInfo {
  return { pid: 4242, ppid: 1, comm, argv, startTicks: 1 };
}

describe("Kilo CLI recognition", () => {
  const module = new KiloModule();

  it.each([
    ["npm's bin on PATH", ["kilo"]],
    ["its alias", ["kilocode"]],
    ["npm's loader under node (a pane runs `kilo`)", ["node", "/usr/lib/node_modules/@kilocode/cli/bin/kilo"]],
    ["npx's loader", ["node", "/root/.npm/_npx/9c1e/node_modules/.bin/kilo", "--continue"]],
    ["the native build the loader starts", ["/opt/node_modules/@kilocode/cli/bin/.kilo", "-s", "ses_1"]],
    ["a wrapper that execs it", ["/home/me/bin/kilo", "--session", "ses_1"]],
  ])("recognises %s", (_what, argv) => {
    expect(module.recognises(process(argv))).toBe(true);
  });

  it.each([
    ["opencode, which it is built on", ["opencode"]],
    ["another node program", ["node", "/srv/app/server.js"]],
    ["an editor on a file named after it", ["vim", "kilo"]],
  ])("does not take %s", (_what, argv) => {
    expect(module.recognises(process(argv))).toBe(false);
  });

  it("is its own CLI, with its own database and resume arguments", () => {
    expect([module.cli, module.name, module.chatParser.cli, module.history.cli]).toEqual([
      Cli.KILO,
      "kilo",
      Cli.KILO,
      Cli.KILO,
    ]);
    expect(kiloDbPath({ HOME: "/home/me" })).toBe("/home/me/.local/share/kilo/kilo.db");
    expect(kiloDbPath({ HOME: "/home/me", XDG_DATA_HOME: "/data" })).toBe("/data/kilo/kilo.db");
    expect(module.conversations.program).toBe("kilo");
    expect(module.conversations.resumeArgs("ses_1")).toEqual(["--session", "ses_1"]);
    module.close();
  });
});
