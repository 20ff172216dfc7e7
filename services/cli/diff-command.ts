import { parseArgs } from "node:util";
import { ChangeKind } from "../../gen/staragent/v1/workspace_service_pb.js";
import { connectHub, sessionArgument, UsageError } from "./client.js";
import type { Command } from "./command.js";
import { safeText } from "./safe-text.js";
import { diffText, palette, wantsColour } from "./workspace-format.js";

const USAGE = "usage: staragent diff NAME|NODE/NAME [PATH]";

/**
 * `staragent diff NAME [PATH]`: the diff of one file of the session's folder against HEAD, or of every
 * changed file in turn (untracked ones as all added), coloured at a terminal. The text comes from the
 * agent's files, so control characters are printed escaped. Binary files say "binary, N bytes"; a cut
 * diff says so.
 */
export const diffCommand: Command = {
  run: async (args, config, env) => {
    const { positionals } = parseArgs({ args, allowPositionals: true, options: {} });
    const [target, path] = positionals;
    if (target === undefined || positionals.length > 2) throw new UsageError(USAGE);
    const hub = await connectHub(config);
    const name = sessionArgument(target);
    const p = palette(wantsColour(process.stdout, env));
    const paths =
      path !== undefined
        ? [path]
        : (await hub.workspace.getChanges({ name })).files
            .filter((f) => f.change !== ChangeKind.UNMERGED || f.unstaged)
            .map((f) => f.path);
    for (const file of paths) {
      const res = await hub.workspace.getFileDiff({ name, path: file });
      if (res.binary) {
        process.stdout.write(`${p.bold(`${safeText(res.path)}: ${res.binarySummary}`)}\n`);
        continue;
      }
      process.stdout.write(diffText(res.diff.replace(/\n$/, ""), p));
      process.stdout.write("\n");
      if (res.truncated) process.stdout.write(`${p.dim(`(the diff of ${safeText(res.path)} is cut at its limit)`)}\n`);
    }
    if (paths.length === 0) process.stdout.write("no changes\n");
    return 0;
  },
};
