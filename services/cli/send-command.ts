import { parseArgs } from "node:util";
import { connectHub, sessionArgument, UsageError } from "./client.js";
import type { Command } from "./command.js";

const USAGE = 'usage: staragent send [--when-idle] NAME "text"   (or - to read the text from stdin)';

/**
 * `staragent send NAME "text"`: types a chat message into a session through the Hub (one bracketed
 * paste, then Enter) and says whether the CLI's native log confirmed the new user turn, so scripts
 * can tell "delivered" from "typed, unconfirmed". `-` reads the text from stdin for multi-line
 * messages. Exit code 0 when the message was typed, whether or not it was confirmed. With
 * `--when-idle` the message is queued on the session's machine instead and typed there when the
 * session is next idle (QueueChatMessage; `staragent queue NAME` lists and cancels).
 */
export const sendCommand: Command = {
  run: async (args, config) => {
    const { positionals, values } = parseArgs({
      args,
      allowPositionals: true,
      options: { "when-idle": { type: "boolean" } },
    });
    const [target, given] = positionals;
    if (target === undefined || given === undefined || positionals.length > 2) throw new UsageError(USAGE);
    const text = given === "-" ? await readStdin() : given;
    const hub = await connectHub(config);
    const name = sessionArgument(target);
    if (values["when-idle"]) {
      const queued = await hub.sessions.queueChatMessage({ name, text });
      process.stdout.write(`queued for ${name}: typed when it is next idle (id ${queued.message?.id ?? "?"})\n`);
      return 0;
    }
    const res = await hub.sessions.sendChatMessage({ name, text });
    process.stdout.write(
      res.confirmed
        ? `delivered to ${name}: confirmed (${res.confirmationDetail})\n`
        : `typed into ${name}, not confirmed: ${res.confirmationDetail}\n`,
    );
    return 0;
  },
};

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks).toString("utf8").replace(/\n$/, "");
}
