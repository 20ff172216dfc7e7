import { parseArgs } from "node:util";
import { connectHub, sessionArgument, UsageError } from "./client.js";
import type { Command } from "./command.js";

/** `staragent stop NAME`: stops a session; adopted ones need `--force` (they predate StarAgent). */
export const stopCommand: Command = {
  run: async (args, config) => {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: { force: { type: "boolean", default: false } },
    });
    const name = positionals[0];
    if (!name || positionals.length > 1) throw new UsageError("usage: staragent stop NAME [--force]");
    const hub = await connectHub(config);
    await hub.sessions.stopSession({ name: sessionArgument(name), force: values.force });
    process.stdout.write(`stopped ${sessionArgument(name)}\n`);
    return 0;
  },
};
