import { parseArgs } from "node:util";
import { toJson } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { type QueuedMessage, QueuedMessageSchema } from "../../gen/staragent/v1/session_service_pb.js";
import { connectHub, sessionArgument, UsageError } from "./client.js";
import type { Command } from "./command.js";
import { ago, alignColumns } from "./format.js";
import { terminalSafe } from "./terminal-text.js";

const USAGE = "usage: staragent queue NAME [--json] [--cancel ID]";

function state(m: QueuedMessage): string {
  if (m.typing) return "typing";
  return m.uncertain ? "uncertain" : "waiting";
}

/**
 * `staragent queue NAME`: the messages queued for a session (`staragent send --when-idle`) that are not
 * typed yet, oldest first; `--cancel ID` removes one before it is typed; `--json` prints the response.
 */
export const queueCommand: Command = {
  run: async (args, config) => {
    const { positionals, values } = parseArgs({
      args,
      allowPositionals: true,
      options: { json: { type: "boolean" }, cancel: { type: "string" } },
    });
    const [target] = positionals;
    if (target === undefined || positionals.length > 1) throw new UsageError(USAGE);
    const hub = await connectHub(config);
    const name = sessionArgument(target);
    if (values.cancel !== undefined) {
      await hub.sessions.cancelQueuedMessage({ name, id: values.cancel });
      process.stdout.write(`cancelled ${terminalSafe(values.cancel)}\n`);
      return 0;
    }
    const res = await hub.sessions.listQueuedMessages({ name });
    if (values.json) {
      const out = { messages: res.messages.map((m) => toJson(QueuedMessageSchema, m)) };
      process.stdout.write(`${JSON.stringify(out)}\n`);
      return 0;
    }
    if (res.messages.length === 0) {
      process.stdout.write(`no messages queued for ${name}\n`);
      return 0;
    }
    const rows = [
      ["ID", "QUEUED", "STATE", "TEXT"],
      ...res.messages.map((m) => [m.id, m.createTime ? ago(timestampDate(m.createTime)) : "", state(m), m.text]),
    ];
    process.stdout.write(`${alignColumns(rows)}\n`);
    return 0;
  },
};
