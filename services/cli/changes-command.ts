import { parseArgs } from "node:util";
import { toJson } from "@bufbuild/protobuf";
import { GetChangesResponseSchema } from "../../gen/staragent/v1/workspace_service_pb.js";
import { connectHub, sessionArgument, UsageError } from "./client.js";
import type { Command } from "./command.js";
import { changesText, palette, wantsColour } from "./workspace-format.js";

const USAGE = "usage: staragent changes NAME|NODE/NAME [--json]";

/**
 * `staragent changes NAME`: what the session's agent changed, from `git status` of its folder on the
 * machine that owns it, grouped staged / unstaged / untracked with lines added and removed; `--json`
 * prints GetChangesResponse for scripts. A folder outside git is an error saying so (exit 1).
 */
export const changesCommand: Command = {
  run: async (args, config, env) => {
    const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { json: { type: "boolean" } } });
    const [target] = positionals;
    if (target === undefined || positionals.length > 1) throw new UsageError(USAGE);
    const hub = await connectHub(config);
    const res = await hub.workspace.getChanges({ name: sessionArgument(target) });
    if (values.json) {
      process.stdout.write(`${JSON.stringify(toJson(GetChangesResponseSchema, res), null, 2)}\n`);
    } else {
      process.stdout.write(changesText(res, palette(wantsColour(process.stdout, env))));
    }
    return 0;
  },
};
