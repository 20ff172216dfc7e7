import { parseArgs } from "node:util";
import { Cli } from "../../gen/staragent/v1/session_pb.js";
import { connectHub, sessionArgument, UsageError } from "./client.js";
import type { Command } from "./command.js";
import { enumWord } from "./format.js";

/**
 * `staragent adopt [NAME] [--node NODE]`: without NAME lists the tmux sessions running a supported CLI
 * that StarAgent does not manage yet; with NAME adopts one (its tmux session is left as it is).
 */
export const adoptCommand: Command = {
  run: async (args, config) => {
    const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { node: { type: "string" } } });
    if (positionals.length > 1) throw new UsageError("usage: staragent adopt [NAME|NODE/NAME] [--node NODE]");
    const hub = await connectHub(config);
    const target = positionals[0];
    if (target !== undefined) {
      const name =
        values.node && !target.includes("/") ? `nodes/${values.node}/sessions/${target}` : sessionArgument(target);
      const res = await hub.sessions.adoptSession({ name });
      process.stdout.write(`adopted ${res.session?.name ?? name}\n`);
      return 0;
    }
    const res = await hub.sessions.listAdoptableSessions({ parent: values.node ? `nodes/${values.node}` : "nodes/-" });
    if (res.adoptableSessions.length === 0) process.stdout.write("no adoptable sessions\n");
    for (const s of res.adoptableSessions) {
      process.stdout.write(`${s.name}  ${enumWord(Cli, s.cli)}  ${s.cwd}  ${s.command}\n`);
    }
    for (const u of res.unreachable) process.stderr.write(`warning: ${u} is unreachable\n`);
    return 0;
  },
};
