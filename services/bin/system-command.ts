import { realpathSync } from "node:fs";
import { resolve } from "node:path";
import { UsageError } from "../cli/client.js";
import type { Command } from "../cli/command.js";

/**
 * `staragent system start|stop|status hub|node|tailscaled`: StarAgent's own services in their tmux
 * sessions (services/node/system/). `staragent system run hub|node ARGS` is what such a session
 * runs: it takes the tokens `start` left for it (`launch-secrets.ts`) into its environment and runs the
 * Hub or the Node in this process, as `staragent hub` and `staragent node` do. `staragent system
 * supervise SERVICE ... -- ARGV` runs ARGV and restarts it whenever it exits (system/supervisor.ts):
 * what a system session runs around it.
 */
export const systemCommand: Command = {
  run: async (args, config, env) => {
    const [verb, name, ...rest] = args;
    if (verb === "supervise") {
      const { runSupervisor } = await import("../node/system/supervisor.js");
      return runSupervisor(name ?? "", rest, resolve(config.home), env);
    }
    if (verb === "run") {
      const { runnableService } = await import("../node/system/system-main.js");
      const service = runnableService(name);
      if (!service) throw new UsageError("usage: staragent system run hub|node [ARGS...] (what a system session runs)");
      const { takeLaunchSecrets } = await import("../node/system/launch-secrets.js");
      const serviceEnv = { ...env, ...(await takeLaunchSecrets(resolve(config.home), service)) };
      if (service === "hub") {
        const { runHub } = await import("../hub/main.js");
        await runHub(rest, serviceEnv, { systemSession: true });
      } else {
        const { runNode } = await import("../node/main.js");
        await runNode(rest, serviceEnv);
      }
      return 0;
    }
    const { runSystemCommand } = await import("../node/system/system-main.js");
    return runSystemCommand(args, env, thisCommand());
  },
};

/**
 * The argv that runs this same `staragent`: node, its own options (a loader when run from the
 * sources), and the script, resolved so that a session started from a symlink (npm's global bin)
 * runs the real file.
 */
function thisCommand(): string[] {
  const script = process.argv[1];
  if (!script) throw new Error("cannot tell which staragent runs (no script in process.argv)");
  return [process.execPath, ...process.execArgv, realpathSync(script)];
}
