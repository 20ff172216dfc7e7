import { parseArgs } from "node:util";
import { toJson } from "@bufbuild/protobuf";
import { type ChatMessage, ChatMessageSchema, ChatRole } from "../../gen/staragent/v1/session_pb.js";
import { type GetChatResponse, WatchEventType } from "../../gen/staragent/v1/session_service_pb.js";
import { sleep } from "../common/async-queue.js";
import { connectHub, type HubClients, sessionArgument, UsageError } from "./client.js";
import type { Command } from "./command.js";

/** How often `chat --follow` asks for the chat even without a change notice: the revision tmux gives
 * has one-second resolution, so a second change within the same second is caught by this poll. */
export const FOLLOW_POLL_MS = 2_000;

const USAGE = "usage: staragent chat NAME [--all | --pages N] [--page-size N] [--follow] [--lines N] [--json]";

/**
 * `staragent chat NAME`: prints a session's chat, oldest first: the newest page (read from the CLI's
 * native log where it keeps one), or with `--pages N` that many pages back, with `--all` the whole
 * history. With `--follow` it then keeps printing what is new, asking GetChat with its cursor whenever
 * WatchSessions reports a new `chat_revision` for the session (and every FOLLOW_POLL_MS as a safety
 * net), until Ctrl-C or the session ends. `--json` prints one ChatMessage (JSON) per line instead of
 * text.
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
        all: { type: "boolean", default: false },
        pages: { type: "string", default: "1" },
        "page-size": { type: "string", default: "0" },
      },
    });
    const [target] = positionals;
    if (target === undefined || positionals.length > 1) throw new UsageError(USAGE);
    if (!/^\d+$/.test(values.lines)) throw new UsageError(`--lines ${values.lines}: not a number of lines`);
    if (!/^[1-9]\d*$/.test(values.pages))
      throw new UsageError(`--pages ${values.pages}: not a number of pages (1 or more)`);
    if (!/^\d+$/.test(values["page-size"])) {
      throw new UsageError(`--page-size ${values["page-size"]}: not a number of messages`);
    }
    const hub = await connectHub(config);
    const printer = new ChatPrinter(values.json);
    const request = {
      name: sessionArgument(target),
      cursor: "",
      historyLines: Number(values.lines),
      pageSize: Number(values["page-size"]),
    };
    const first = await hub.sessions.getChat(request);
    const pages = values.all ? Number.POSITIVE_INFINITY : Number(values.pages);
    const older = await olderMessages(hub, request, first, pages - 1);
    printer.print(first, older.messages);
    if (!values.json && older.hasMore) {
      process.stderr.write("(older messages not shown: --pages N or --all)\n");
    }
    if (!values.follow) {
      if (first.messages.length + older.messages.length === 0 && !values.json) process.stdout.write("(no messages)\n");
      return 0;
    }
    await follow(hub, request, first, printer);
    return 0;
  },
};

/** Up to `pages` pages older than `first`, read back through `older_page_token`, oldest first. */
async function olderMessages(
  hub: HubClients,
  request: { name: string; historyLines: number; pageSize: number },
  first: GetChatResponse,
  pages: number,
): Promise<{ messages: ChatMessage[]; hasMore: boolean }> {
  let messages: ChatMessage[] = [];
  let token = first.hasMore ? first.olderPageToken : "";
  for (let read = 0; read < pages && token !== ""; read++) {
    const page = await hub.sessions.getChat({ ...request, cursor: "", before: token });
    messages = [...page.messages, ...messages];
    token = page.hasMore ? page.olderPageToken : "";
  }
  return { messages, hasMore: token !== "" };
}

async function follow(
  hub: HubClients,
  request: { name: string; cursor: string; historyLines: number; pageSize: number },
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
 * printed whole; a message that grew (an answer still streaming) gets only its new text, also when
 * the native log took it over from the screen under a new id; one that changed otherwise is printed
 * again, marked; a reset prints the whole chat after a notice.
 */
class ChatPrinter {
  /** What was printed, by id, in chat order. */
  private printed = new Map<string, ChatMessage>();

  constructor(private readonly json: boolean) {}

  /** Prints a response; `older` (oldest first) goes before its messages (pages read back). */
  print(res: GetChatResponse, older: readonly ChatMessage[] = []): void {
    if (res.reset && this.printed.size > 0 && !this.json) {
      process.stdout.write("── the chat was read again from the start ──\n");
    }
    // Messages the client held from the response's first one on are replaced by the response.
    const replaced: ChatMessage[] = [];
    if (res.reset) {
      this.printed.clear();
    } else if (res.messages[0]) {
      const from = res.messages[0].id;
      const ids = [...this.printed.keys()];
      const at = ids.indexOf(from);
      if (at >= 0) {
        const now = new Set(res.messages.map((m) => m.id));
        for (const id of ids.slice(at)) {
          const gone = this.printed.get(id);
          if (gone && !now.has(id)) replaced.push(gone);
          this.printed.delete(id);
        }
      }
    }
    for (const message of [...older, ...res.messages]) {
      const before = this.printed.get(message.id) ?? this.takeOver(replaced, message);
      this.printed.set(message.id, message);
      this.write(message, before);
    }
  }

  /** A replaced screen message the new one continues (same speaker, its text first), if any. */
  private takeOver(replaced: ChatMessage[], message: ChatMessage): ChatMessage | undefined {
    const at = replaced.findIndex((r) => r.role === message.role && message.text.startsWith(r.text));
    return at < 0 ? undefined : replaced.splice(at, 1)[0];
  }

  private write(message: ChatMessage, before: ChatMessage | undefined): void {
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
