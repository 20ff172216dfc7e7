import { parseArgs } from "node:util";
import { connectHub, sessionArgument, UsageError } from "./client.js";
import type { Command } from "./command.js";

/**
 * `staragent stop NAME`: stops a session; adopted ones need `--force` (they predate StarAgent).
 * `--remove-worktree` also removes the git worktree StarAgent made for it, only when that loses nothing.
 */
export const stopCommand: Command = {
  run: async (args, config) => {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: { force: { type: "boolean", default: false }, "remove-worktree": { type: "boolean", default: false } },
    });
    const name = positionals[0];
    if (!name || positionals.length > 1)
      throw new UsageError("usage: staragent stop NAME [--force] [--remove-worktree]");
    const hub = await connectHub(config);
    const removeWorktree = values["remove-worktree"];
    await hub.sessions.stopSession({ name: sessionArgument(name), force: values.force, removeWorktree });
    process.stdout.write(`stopped ${sessionArgument(name)}${removeWorktree ? " and removed its worktree" : ""}\n`);
    return 0;
  },
};
