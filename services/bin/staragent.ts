#!/usr/bin/env node
// The `staragent` command: the one entry point (`make build` bundles it into dist/staragent.js), and the
// composition root that joins the CLI to the servers. The CLI is a client of the API and imports neither
// the Hub nor the Node (make lint's dependency-cruiser rules enforce it); `staragent hub`, `node` and
// `system` are handed to it here as loaders, each imported only when its command runs, so `staragent ls` never loads
// the servers. Installed, it runs compiled from dist/; stack traces name the .ts lines through the
// source maps the build writes beside each file.
import type { Command } from "../cli/command.js";
import type { ServerCommands } from "../cli/main.js";

process.setSourceMapsEnabled(true);

/** Runs a server until it is stopped; the command's exit code is then 0. */
function serverCommand(serve: (args: string[], env: NodeJS.ProcessEnv) => Promise<void>): Command {
  return {
    run: async (args, _config, env) => {
      await serve(args, env);
      return 0;
    },
  };
}

const servers: ServerCommands = {
  hub: async () => serverCommand((await import("../hub/main.js")).runHub),
  node: async () => serverCommand((await import("../node/main.js")).runNode),
  system: async () => (await import("./system-command.js")).systemCommand,
};

const { main } = await import("../cli/main.js");
process.exitCode = await main(process.argv.slice(2), process.env, servers);
