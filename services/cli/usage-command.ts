import { parseArgs } from "node:util";
import { toJson } from "@bufbuild/protobuf";
import { SessionUsageSchema } from "../../gen/staragent/v1/session_pb.js";
import { connectHub, sessionArgument, UsageError } from "./client.js";
import type { Command } from "./command.js";
import { usageReport } from "./usage-format.js";

/**
 * `staragent usage NAME`: a session's model, context used of its window, totals, last turn, plan
 * limits and their resets, as its CLI's native log records them (`--json`: the SessionUsage message).
 */
export const usageCommand: Command = {
  run: async (args, config) => {
    const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { json: { type: "boolean" } } });
    const name = positionals[0];
    if (!name || positionals.length > 1) throw new UsageError("usage: staragent usage NAME [--json]");
    const hub = await connectHub(config);
    const { session } = await hub.sessions.getSession({ name: sessionArgument(name) });
    const usage = session?.usage;
    if (values.json) {
      process.stdout.write(`${JSON.stringify(usage ? toJson(SessionUsageSchema, usage) : null, null, 2)}\n`);
      return 0;
    }
    if (!usage) {
      process.stdout.write(`${name}: its CLI has recorded no usage (shells and other programs never do)\n`);
      return 0;
    }
    process.stdout.write(`${usageReport(usage)}\n`);
    return 0;
  },
};
