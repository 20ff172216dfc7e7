import { parseArgs } from "node:util";
import { toJson } from "@bufbuild/protobuf";
import { SessionSchema } from "../../gen/staragent/v1/session_pb.js";
import { connectHub } from "./client.js";
import type { Command } from "./command.js";
import { sessionTable } from "./format.js";

/** Largest page asked for: most Hubs answer in one call; the loop follows page tokens beyond it. */
const LIST_PAGE_SIZE = 1000;

/** `staragent ls`: every session and its status, as a table or as JSON for scripts. */
export const lsCommand: Command = {
  run: async (args, config) => {
    const { values } = parseArgs({
      args,
      options: { json: { type: "boolean" }, node: { type: "string" }, filter: { type: "string", default: "" } },
    });
    const hub = await connectHub(config);
    const parent = values.node ? `nodes/${values.node}` : "nodes/-";
    const sessions = [];
    const unreachable = new Set<string>();
    let pageToken = "";
    do {
      const res = await hub.sessions.listSessions({
        parent,
        filter: values.filter,
        pageSize: LIST_PAGE_SIZE,
        pageToken,
      });
      sessions.push(...res.sessions);
      for (const u of res.unreachable) unreachable.add(u);
      pageToken = res.nextPageToken;
    } while (pageToken !== "");
    if (values.json) {
      const out = { sessions: sessions.map((s) => toJson(SessionSchema, s)), unreachable: [...unreachable] };
      process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
    } else {
      process.stdout.write(sessions.length > 0 ? `${sessionTable(sessions)}\n` : "no sessions\n");
      for (const u of unreachable)
        process.stderr.write(`warning: ${u} is unreachable; its sessions are as last seen\n`);
    }
    return 0;
  },
};
