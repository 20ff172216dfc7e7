import { readEnvironment } from "../common/config.js";
import type { Command } from "./command.js";

/**
 * One sub-command as `staragent --help` lists it. Its module is imported only when it runs, so a
 * client command loads the client and the generated code it uses, never the terminal, the status engine,
 * the native modules or the servers (test/package/command-imports.test.ts checks it).
 */
interface CommandEntry {
  /** The arguments, for `staragent --help`. */
  readonly usage: string;
  /** What it does, in one line for `staragent --help`. */
  readonly summary: string;
  /** Imports the command's code. */
  load(): Promise<Command>;
}

/**
 * The commands that run the Hub, a Node or StarAgent's system sessions: their code is the servers',
 * which the CLI does not import (it is a client of the API like any script), so the `staragent` entry
 * point (services/bin/staragent.ts) hands their loaders in.
 */
export interface ServerCommands {
  readonly hub: () => Promise<Command>;
  readonly node: () => Promise<Command>;
  readonly system: () => Promise<Command>;
}

/**
 * Commands whose output is not guarded by terminal-text.ts: the servers (their own logs and login
 * link) and `attach`, whose output is a terminal's bytes by design.
 */
const RAW_OUTPUT_COMMANDS = new Set(["hub", "node", "system", "attach"]);

/** The command table, in the order `staragent --help` lists it. */
function commandTable(servers: ServerCommands): Record<string, CommandEntry> {
  return {
    attach: {
      usage: "NAME|NODE/NAME [--read-only] [--take-over]",
      summary: "open a session's live terminal here (Ctrl-] detaches)",
      load: async () => (await import("./attach-command.js")).attachCommand,
    },
    hub: {
      usage: "[--host 127.0.0.1] [--port 8080] [--node NAME=URL ...]",
      summary: "run the Hub (dashboard and API) for this machine and registered Nodes",
      load: servers.hub,
    },
    node: {
      usage: "[--name NAME] [--host 127.0.0.1] [--port 8081]",
      summary: "run a Node (the Remote Node API over this machine's tmux)",
      load: servers.node,
    },
    nodes: {
      usage: "ls [--json] | add NAME URL [--token-file FILE] [--force] | set NAME [--url URL] [--token] | rm NAME",
      summary: "list, add, change or remove the Nodes the Hub shows (the token from a file or stdin)",
      load: async () => (await import("./nodes-command.js")).nodesCommand,
    },
    notify: {
      usage:
        "ls | add NAME --url URL --format F [--secret-file FILE] | rm NAME | test NAME | deliveries [NAME] | devices",
      summary: "webhooks (ntfy, Slack, Discord, Telegram, Lark) and push devices the Hub notifies; the delivery log",
      load: async () => (await import("./notify-command.js")).notifyCommand,
    },
    logins: {
      usage: "ls [--json] | revoke ID|--all",
      summary: "list or end the Hub's browser logins (end them all if a login cookie may have leaked)",
      load: async () => (await import("./logins-command.js")).loginsCommand,
    },
    system: {
      usage: "start|stop|status hub|node|tailscaled [-- ARGS...]",
      summary: "run StarAgent's own services in their tmux sessions (staragent-hub, ...)",
      load: servers.system,
    },
    ls: {
      usage: "[--json] [--node NODE] [--filter 'status=review cli=claude']",
      summary: "list sessions with their status",
      load: async () => (await import("./ls-command.js")).lsCommand,
    },
    new: {
      usage: "NAME [--cwd DIR] [--node NODE] [--worktree BRANCH [--base REF]] [--resume ID] [-- COMMAND...]",
      summary: "start a session running COMMAND (default: your shell) in DIR (default: here)",
      load: async () => (await import("./new-command.js")).newCommand,
    },
    stop: {
      usage: "NAME|NODE/NAME [--force] [--remove-worktree]",
      summary: "stop a session (--force for sessions StarAgent did not create)",
      load: async () => (await import("./stop-command.js")).stopCommand,
    },
    send: {
      usage: '[--when-idle] NAME|NODE/NAME "text"|-',
      summary: "type a chat message into a session (- reads stdin; --when-idle queues it until idle)",
      load: async () => (await import("./send-command.js")).sendCommand,
    },
    conversations: {
      usage: "[--node NODE] [--cwd DIR] [--cli claude|codex] [--json]",
      summary: "list past conversations in the CLIs' logs, to resume with new --resume ID",
      load: async () => (await import("./conversations-command.js")).conversationsCommand,
    },
    queue: {
      usage: "NAME|NODE/NAME [--json] [--cancel ID]",
      summary: "list a session's queued messages (send --when-idle), or cancel one",
      load: async () => (await import("./queue-command.js")).queueCommand,
    },
    chat: {
      usage: "NAME|NODE/NAME [--follow] [--lines N] [--json]",
      summary: "print a session's chat (--follow keeps printing new messages)",
      load: async () => (await import("./chat-command.js")).chatCommand,
    },
    changes: {
      usage: "NAME|NODE/NAME [--json]",
      summary: "list the files a session's agent changed (git status of its folder, with +/- lines)",
      load: async () => (await import("./changes-command.js")).changesCommand,
    },
    diff: {
      usage: "NAME|NODE/NAME [PATH]",
      summary: "print the diff of one changed file, or of every one (coloured at a terminal)",
      load: async () => (await import("./diff-command.js")).diffCommand,
    },
    watch: {
      usage: "[--node NODE]",
      summary: "stream status changes, one line each",
      load: async () => (await import("./watch-command.js")).watchCommand,
    },
    prompts: {
      usage: "[--json]",
      summary: "list the prompts sessions wait on, on every node, with their choices",
      load: async () => (await import("./prompts-command.js")).promptsCommand,
    },
    answer: {
      usage: "NAME|NODE/NAME CHOICE [--text T] [--fingerprint F]",
      summary: "answer a session's prompt (without --fingerprint: shown, then confirmed at a terminal)",
      load: async () => (await import("./answer-command.js")).answerCommand,
    },
    usage: {
      usage: "NAME|NODE/NAME [--json]",
      summary: "show a session's model, context used, tokens and plan limits",
      load: async () => (await import("./usage-command.js")).usageCommand,
    },
    adopt: {
      usage: "[NAME|NODE/NAME] [--node NODE]",
      summary: "list sessions that can be adopted, or adopt one",
      load: async () => (await import("./adopt-command.js")).adoptCommand,
    },
  };
}

function help(commands: Record<string, CommandEntry>): string {
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
    "'staragent --version' prints the version, the commit it was built from and the API contract.",
    "",
  ].join("\n");
}

/**
 * Runs `staragent` with `argv` (without the program name); returns the exit code. `servers` loads the
 * server commands (see ServerCommands).
 */
export async function main(argv: string[], env: NodeJS.ProcessEnv, servers: ServerCommands): Promise<number> {
  const commands = commandTable(servers);
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    process.stdout.write(help(commands));
    return name === undefined ? 2 : 0;
  }
  if (name === "--version" || name === "version") {
    const { versionLine } = await import("./version.js");
    process.stdout.write(`${await versionLine()}\n`);
    return 0;
  }
  const entry = commands[name];
  if (!entry) {
    process.stderr.write(`staragent: unknown command '${name}'; see 'staragent --help'\n`);
    return 2;
  }
  // Client commands print text from panes, logs, paths and Nodes: through the one guard.
  if (!RAW_OUTPUT_COMMANDS.has(name)) {
    const { guardTerminalOutput } = await import("./terminal-text.js");
    if (!rest.includes("--json")) guardTerminalOutput(process.stdout);
    guardTerminalOutput(process.stderr);
  }
  try {
    const command = await entry.load();
    return await command.run(rest, readEnvironment(env), env);
  } catch (err) {
    // Imported here, on the error path only: --help and the server commands do not need them otherwise
    // (a command that got as far as a call has loaded both already).
    const { Code, ConnectError } = await import("@connectrpc/connect");
    const { UsageError } = await import("./client.js");
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
