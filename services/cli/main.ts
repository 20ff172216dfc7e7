import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { toJson } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { SessionSchema } from "../../gen/staragent/v1/session_pb.js";
import { type EnvironmentConfig, readEnvironment } from "../common/config.js";
import { runHub } from "../hub/main.js";
import { runNode } from "../node/main.js";
import { adoptCommand } from "./adopt-command.js";
import { attachCommand } from "./attach-command.js";
import { chatCommand } from "./chat-command.js";
import { connectHub, sessionArgument, UsageError } from "./client.js";
import { sessionTable } from "./format.js";
import { sendCommand } from "./send-command.js";
import { watchCommand } from "./watch-command.js";

/** One `staragent` sub-command. */
export interface Command {
  /** The arguments, for `staragent --help`. */
  readonly usage: string;
  /** What it does, in one line for `staragent --help`. */
  readonly summary: string;
  /** Runs the command; returns the exit code. */
  run(args: string[], config: EnvironmentConfig, env: NodeJS.ProcessEnv): Promise<number>;
}

const commands: Record<string, Command> = {
  attach: attachCommand,
  hub: {
    usage: "[--host 127.0.0.1] [--port 8080] [--node NAME=URL ...]",
    summary: "run the Hub (dashboard and API) for this machine and registered Nodes",
    run: async (args, _config, env) => {
      await runHub(args, env);
      return 0;
    },
  },
  node: {
    usage: "[--name NAME] [--host 127.0.0.1] [--port 8081]",
    summary: "run a Node (the Remote Node API over this machine's tmux)",
    run: async (args, _config, env) => {
      await runNode(args, env);
      return 0;
    },
  },
  ls: {
    usage: "[--json] [--node NODE] [--filter 'status=review cli=claude']",
    summary: "list sessions with their status",
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
        const res = await hub.sessions.listSessions({ parent, filter: values.filter, pageSize: 1000, pageToken });
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
  },
  new: {
    usage: "NAME [--cwd DIR] [--node NODE] [-- COMMAND...]",
    summary: "start a session running COMMAND (default: your shell) in DIR (default: here)",
    run: async (args, config) => {
      const dash = args.indexOf("--");
      const own = dash >= 0 ? args.slice(0, dash) : args;
      const command = dash >= 0 ? args.slice(dash + 1) : [];
      const { values, positionals } = parseArgs({
        args: own,
        allowPositionals: true,
        options: { cwd: { type: "string" }, node: { type: "string", default: "local" } },
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
  },
  stop: {
    usage: "NAME|NODE/NAME [--force]",
    summary: "stop a session (--force for sessions StarAgent did not create)",
    run: async (args, config) => {
      const { values, positionals } = parseArgs({
        args,
        allowPositionals: true,
        options: { force: { type: "boolean", default: false } },
      });
      const name = positionals[0];
      if (!name || positionals.length > 1) throw new UsageError("usage: staragent stop NAME [--force]");
      const hub = await connectHub(config);
      await hub.sessions.stopSession({ name: sessionArgument(name), force: values.force });
      process.stdout.write(`stopped ${sessionArgument(name)}\n`);
      return 0;
    },
  },
  send: sendCommand,
  chat: chatCommand,
  watch: watchCommand,
  adopt: adoptCommand,
};

/** Adds a command (each feature registers its own). */
export function registerCommand(name: string, command: Command): void {
  commands[name] = command;
}

function help(): string {
  const width = Math.max(...Object.keys(commands).map((n) => n.length));
  return [
    "Usage: staragent COMMAND [ARGS]",
    "",
    "StarAgent runs and watches coding-agent CLIs in tmux, on this machine and on Nodes.",
    "",
    "Commands:",
    ...Object.entries(commands).flatMap(([name, c]) => [
      `  ${name.padEnd(width)}  ${c.usage}`,
      `  ${"".padEnd(width)}    ${c.summary}`,
    ]),
    "",
    "Client commands talk to the Hub at $STARAGENT_URL (default http://127.0.0.1:8080) with the",
    "token in $STARAGENT_AUTH_TOKEN or $STARAGENT_HOME/auth_token ($STARAGENT_HOME: ~/.staragent).",
    "Sessions are named NAME (on the Hub's machine) or NODE/NAME.",
    "",
  ].join("\n");
}

/** Runs `staragent` with `argv` (without the program name); returns the exit code. */
export async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    process.stdout.write(help());
    return name === undefined ? 2 : 0;
  }
  const command = commands[name];
  if (!command) {
    process.stderr.write(`staragent: unknown command '${name}'; see 'staragent --help'\n`);
    return 2;
  }
  try {
    return await command.run(rest, readEnvironment(env), env);
  } catch (err) {
    if (err instanceof ConnectError) {
      const hint = err.code === Code.Unavailable ? ` (is the Hub running at ${readEnvironment(env).hubUrl}?)` : "";
      process.stderr.write(`staragent ${name}: ${Code[err.code]}: ${err.rawMessage}${hint}\n`);
      return 1;
    }
    if (
      err instanceof UsageError ||
      (err instanceof TypeError && "code" in err && String(err.code).startsWith("ERR_PARSE_ARGS"))
    ) {
      process.stderr.write(`staragent ${name}: ${err.message}\n`);
      return 2;
    }
    if (err instanceof Error) {
      process.stderr.write(`staragent ${name}: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
}
