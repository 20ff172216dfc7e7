import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { toJson } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Cli } from "../../gen/staragent/v1/session_pb.js";
import { ConversationSchema } from "../../gen/staragent/v1/session_service_pb.js";
import { LOCAL_NODE_ID } from "../common/resource-names.js";
import { connectHub, UsageError } from "./client.js";
import type { Command } from "./command.js";
import { ago, alignColumns } from "./format.js";

const USAGE = "usage: staragent conversations [--node NODE] [--cwd DIR] [--cli claude|codex] [--json]";

/** The Cli of a `--cli` word (`claude`, `codex`), or undefined. */
export function cliOfWord(word: string): Cli | undefined {
  const value = (Cli as unknown as Record<string, number>)[word.toUpperCase()];
  return typeof value === "number" && value !== Cli.UNSPECIFIED ? value : undefined;
}

/**
 * `staragent conversations`: past conversations in the native logs of a node (ListConversations),
 * newest first, to resume one with `staragent new NAME --resume ID`.
 */
export const conversationsCommand: Command = {
  run: async (args, config) => {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: {
        node: { type: "string", default: LOCAL_NODE_ID },
        cwd: { type: "string" },
        cli: { type: "string" },
        json: { type: "boolean" },
      },
    });
    if (positionals.length > 0) throw new UsageError(USAGE);
    const cli = values.cli === undefined ? Cli.UNSPECIFIED : cliOfWord(values.cli);
    if (cli === undefined) throw new UsageError(`--cli: unknown CLI ${JSON.stringify(values.cli)}; ${USAGE}`);
    const hub = await connectHub(config);
    const res = await hub.sessions.listConversations({
      parent: `nodes/${values.node}`,
      cwd: values.cwd === undefined ? "" : resolve(values.cwd),
      cli,
      pageSize: 1000,
    });
    if (values.json) {
      process.stdout.write(
        `${JSON.stringify({ conversations: res.conversations.map((c) => toJson(ConversationSchema, c)) })}\n`,
      );
      return 0;
    }
    if (res.conversations.length === 0) {
      process.stdout.write("no past conversations found\n");
      return 0;
    }
    const rows = [
      ["ID", "CLI", "UPDATED", "TURNS", "OPEN IN", "FIRST PROMPT"],
      ...res.conversations.map((c) => [
        c.id,
        (Cli[c.cli] ?? "").toLowerCase(),
        c.updateTime ? ago(timestampDate(c.updateTime)) : "",
        `${c.turnCount}${c.turnCountExact ? "" : "+"}`,
        c.openInSession || "-",
        c.firstPrompt,
      ]),
    ];
    process.stdout.write(`${alignColumns(rows)}\n`);
    return 0;
  },
};
