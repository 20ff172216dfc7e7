import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { Cli } from "../../gen/staragent/v1/session_pb.js";
import { LOCAL_NODE_ID } from "../common/resource-names.js";
import { connectHub, type HubClients, UsageError } from "./client.js";
import type { Command } from "./command.js";

const USAGE =
  "usage: staragent new NAME --cwd DIR [--node NODE] [--worktree BRANCH [--base REF] [--worktree-path P]] [--resume ID] [-- COMMAND...]";

/** The CLI of a past conversation on `node` by its id (ListConversations); NOT_FOUND-like usage error when none. */
async function findConversation(hub: HubClients, node: string, id: string) {
  let pageToken = "";
  do {
    const page = await hub.sessions.listConversations({ parent: `nodes/${node}`, pageSize: 1000, pageToken });
    const found = page.conversations.find((c) => c.id === id);
    if (found) return { cli: found.cli, conversationId: id };
    pageToken = page.nextPageToken;
  } while (pageToken !== "");
  throw new UsageError(
    `--resume: no past conversation ${id} on node ${node} (staragent conversations --node ${node} lists them)`,
  );
}

/**
 * `staragent new NAME [-- COMMAND...]`: starts a session; everything after `--` is its command.
 * `--worktree BRANCH` starts it on a new git worktree of the repository DIR is in (`--base REF`, the
 * branch's start, and `--worktree-path P`, its folder, as CreateSessionRequest.worktree describes).
 */
export const newCommand: Command = {
  run: async (args, config) => {
    const dash = args.indexOf("--");
    const own = dash >= 0 ? args.slice(0, dash) : args;
    const command = dash >= 0 ? args.slice(dash + 1) : [];
    const { values, positionals } = parseArgs({
      args: own,
      allowPositionals: true,
      options: {
        cwd: { type: "string" },
        node: { type: "string", default: LOCAL_NODE_ID },
        worktree: { type: "string" },
        base: { type: "string", default: "" },
        "worktree-path": { type: "string", default: "" },
        resume: { type: "string" },
      },
    });
    const name = positionals[0];
    if (!name || positionals.length > 1) throw new UsageError(USAGE);
    if (values.worktree === undefined && (values.base !== "" || values["worktree-path"] !== ""))
      throw new UsageError(`--base and --worktree-path go with --worktree BRANCH; ${USAGE}`);
    const hub = await connectHub(config);
    const resume = values.resume === undefined ? undefined : await findConversation(hub, values.node, values.resume);
    const res = await hub.sessions.createSession({
      parent: `nodes/${values.node}`,
      sessionId: name,
      cwd: resolve(values.cwd ?? process.cwd()),
      command,
      ...(values.worktree === undefined
        ? {}
        : { worktree: { branch: values.worktree, baseRef: values.base, path: values["worktree-path"] } }),
      ...(resume ? { resume } : {}),
    });
    const worktree = res.session?.worktree;
    const how = [
      worktree ? ` on a new worktree ${worktree.path} (branch ${worktree.branch})` : "",
      resume ? ` resuming ${(Cli[resume.cli] ?? "").toLowerCase()} conversation ${resume.conversationId}` : "",
    ].join("");
    process.stdout.write(`created ${res.session?.name ?? name}${how}\n`);
    return 0;
  },
};
