import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { AgentContext } from "../../services/node/agents/agent.js";
import type { ProcessInfo } from "../../services/node/agents/process-table.js";
import type { AgentFixtureSetup } from "./agent-fixture-setup.js";
import { testPane } from "./panes.js";

/**
 * The AgentContext a module's status fixtures are observed in: its fixture setup's CLI process (argv,
 * pid) in a pane of `cwd`, with `home` as the CLI's `$HOME`, the pane's title and screen as given.
 */
export function fixtureContext(options: {
  home: string;
  cwd: string;
  setup: AgentFixtureSetup;
  title: string;
  screen: string;
  processStart: Date;
}): AgentContext {
  const { argv, pid } = options.setup;
  const pane = testPane({
    sessionName: "agent",
    sessionCreated: Math.floor(options.processStart.getTime() / 1000),
    sessionActivity: Math.floor(Date.now() / 1000),
    windowActivity: Math.floor(Date.now() / 1000),
    panePid: pid - 1,
    paneCurrentCommand: argv[0] ?? "",
    paneCurrentPath: options.cwd,
    alternateOn: true,
    paneTitle: options.title,
  });
  const process: ProcessInfo = {
    pid,
    ppid: pid - 1,
    comm: argv[0] ?? "",
    argv: argv,
    startTicks: 1,
  };
  return {
    pane,
    process,
    processStart: options.processStart,
    env: async () => ({ HOME: options.home }),
    screen: async () => options.screen,
    visibleScreen: async () => `${options.title}\n${options.screen}`,
    siblings: [],
  };
}

/** A status fixture's screen: a capture file in `dir`, `inline:<text>`, or "" (no readable screen). */
export async function fixtureScreen(dir: string, screen: string | undefined): Promise<string> {
  if (screen === undefined || screen === "") return "";
  if (screen.startsWith("inline:")) return screen.slice("inline:".length);
  return readFile(join(dir, screen), "utf8");
}
