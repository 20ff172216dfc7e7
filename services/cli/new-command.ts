import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { LOCAL_NODE_ID } from "../common/resource-names.js";
import { connectHub, UsageError } from "./client.js";
import type { Command } from "./command.js";

/** `staragent new NAME [-- COMMAND...]`: starts a session; everything after `--` is its command. */
export const newCommand: Command = {
  run: async (args, config) => {
    const dash = args.indexOf("--");
    const own = dash >= 0 ? args.slice(0, dash) : args;
    const command = dash >= 0 ? args.slice(dash + 1) : [];
    const { values, positionals } = parseArgs({
      args: own,
      allowPositionals: true,
      options: { cwd: { type: "string" }, node: { type: "string", default: LOCAL_NODE_ID } },
    });
    const name = positionals[0];
    if (!name || positionals.length > 1)
      throw new UsageError("usage: staragent new NAME --cwd DIR [--node NODE] [-- COMMAND...]");
    const hub = await connectHub(config);
    const res = await hub.sessions.createSession({
      parent: `nodes/${values.node}`,
      sessionId: name,
      cwd: resolve(values.cwd ?? process.cwd()),
      command,
    });
    process.stdout.write(`created ${res.session?.name ?? name}\n`);
    return 0;
  },
};
