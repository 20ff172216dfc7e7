import { parseArgs } from "node:util";
import { connectHub, sessionArgument, UsageError } from "./client.js";
import type { Command } from "./command.js";

const USAGE = 'usage: staragent send NAME "text"   (or - to read the text from stdin)';

/**
 * `staragent send NAME "text"`: types a chat message into a session through the Hub (one bracketed
 * paste, then Enter) and says whether the CLI's native log confirmed the new user turn, so scripts
 * can tell "delivered" from "typed, unconfirmed". `-` reads the text from stdin for multi-line
 * messages. Exit code 0 when the message was typed, whether or not it was confirmed.
 */
export const sendCommand: Command = {
  run: async (args, config) => {
    const { positionals } = parseArgs({ args, allowPositionals: true, options: {} });
    const [target, given] = positionals;
    if (target === undefined || given === undefined || positionals.length > 2) throw new UsageError(USAGE);
    const text = given === "-" ? await readStdin() : given;
    const hub = await connectHub(config);
    const name = sessionArgument(target);
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
