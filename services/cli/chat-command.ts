import { parseArgs } from "node:util";
import { toJson } from "@bufbuild/protobuf";
import { type ChatMessage, ChatMessageSchema, ChatRole } from "../../gen/staragent/v1/session_pb.js";
import { type GetChatResponse, WatchEventType } from "../../gen/staragent/v1/session_service_pb.js";
import { sleep } from "../common/async-queue.js";
import { connectHub, type HubClients, sessionArgument, UsageError } from "./client.js";
import type { Command } from "./main.js";

/** How often `chat --follow` asks for the chat even without a change notice: the revision tmux gives
 * has one-second resolution, so a second change within the same second is caught by this poll. */
export const FOLLOW_POLL_MS = 2_000;

const USAGE = "usage: staragent chat NAME [--follow] [--lines N] [--json]";

/**
 * `staragent chat NAME [--follow]`: prints a session's chat, oldest first. With `--follow` it keeps
 * printing what is new, asking GetChat with its cursor whenever WatchSessions reports a new
 * `chat_revision` for the session (and every FOLLOW_POLL_MS as a safety net), until Ctrl-C or the
 * session ends. `--json` prints one ChatMessage (JSON) per line instead of text.
 */
export const chatCommand: Command = {
  run: async (args, config) => {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: {
        follow: { type: "boolean", short: "f", default: false },
        lines: { type: "string", default: "0" },
        json: { type: "boolean", default: false },
      },
    });
    const [target] = positionals;
    if (target === undefined || positionals.length > 1) throw new UsageError(USAGE);
    if (!/^\d+$/.test(values.lines)) throw new UsageError(`--lines ${values.lines}: not a number of lines`);
    const hub = await connectHub(config);
    const printer = new ChatPrinter(values.json);
    const request = { name: sessionArgument(target), cursor: "", historyLines: Number(values.lines) };
    const first = await hub.sessions.getChat(request);
    printer.print(first);
    if (!values.follow) {
      if (first.messages.length === 0 && !values.json) process.stdout.write("(no messages)\n");
      return 0;
    }
    await follow(hub, request, first, printer);
    return 0;
  },
};

async function follow(
  hub: HubClients,
  request: { name: string; cursor: string; historyLines: number },
  first: GetChatResponse,
  printer: ChatPrinter,
): Promise<void> {
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  let cursor = first.nextCursor;
  let revision = first.revision;
  let wake: () => void = () => {};
  let ended = false;
  const node = /^nodes\/([^/]+)\//.exec(request.name)?.[1] ?? "-";
  const watching = (async () => {
    for await (const event of hub.sessions.watchSessions({ parent: `nodes/${node}` }, { signal: stop.signal })) {
      if (event.type === WatchEventType.REMOVED && event.removedNames.includes(request.name)) {
        ended = true;
        wake();
        return;
      }
      const session = event.sessions.find((s) => s.name === request.name);
      if (session && session.chatRevision !== revision) wake();
    }
  })().catch((err: unknown) => {
    if (!stop.signal.aborted) throw err;
  });
  try {
    while (!stop.signal.aborted && !ended) {
      await new Promise<void>((resolve) => {
        wake = resolve;
        void sleep(FOLLOW_POLL_MS, stop.signal).then(resolve);
      });
      if (stop.signal.aborted || ended) break;
      const res = await hub.sessions.getChat({ ...request, cursor }, { signal: stop.signal });
      cursor = res.nextCursor;
      revision = res.revision;
      printer.print(res);
    }
    if (ended) process.stderr.write(`${request.name} ended\n`);
  } catch (err) {
    if (!stop.signal.aborted) throw err;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    stop.abort();
    await watching;
  }
}

/**
 * Prints chat responses to a terminal, which cannot take back what it printed: new messages are
 * printed whole; a message that grew (an answer still streaming) gets only its new text; one that
 * changed otherwise is printed again, marked; a reset prints the whole chat after a notice.
 */
class ChatPrinter {
  private readonly printed = new Map<string, ChatMessage>();

  constructor(private readonly json: boolean) {}

  print(res: GetChatResponse): void {
    if (res.reset && this.printed.size > 0 && !this.json) {
      process.stdout.write("── the chat was read again from the start ──\n");
    }
    if (res.reset) this.printed.clear();
    for (const message of res.messages) {
      const before = this.printed.get(message.id);
      this.printed.set(message.id, message);
      if (this.json) {
        if (!before || before.text !== message.text) {
          process.stdout.write(`${JSON.stringify(toJson(ChatMessageSchema, message))}\n`);
        }
      } else if (!before) {
        process.stdout.write(formatMessage(message));
      } else if (before.role === message.role && message.text.startsWith(before.text)) {
        const added = message.text.slice(before.text.length);
        if (added !== "") process.stdout.write(indent(added.replace(/^\n/, "")));
      } else if (before.text !== message.text) {
        process.stdout.write(formatMessage(message, " (changed)"));
      }
    }
  }
}

/** One message as text: a header naming the speaker (and tool), then the text indented by two. */
export function formatMessage(message: ChatMessage, note = ""): string {
  const who =
    message.role === ChatRole.TOOL
      ? `tool ${message.toolName}${message.toolTarget ? `: ${message.toolTarget}` : ""}`
      : (ChatRole[message.role] ?? "unspecified").toLowerCase();
  return `[${who}]${note}\n${message.text === "" ? "" : indent(message.text)}`;
}

function indent(text: string): string {
  return `${text
    .split("\n")
    .map((l) => (l === "" ? "" : `  ${l}`))
    .join("\n")}\n`;
}
