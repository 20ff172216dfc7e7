import { readFile } from "node:fs/promises";
import { UsageError } from "./client.js";

/** Largest secret read from a file or stdin: tokens are tens of characters; anything huge is a mistake. */
const MAX_SECRET_BYTES = 4096;

/**
 * Reads a secret (a node token) without it ever being an argument `ps` could show: from `file`
 * (`-` for stdin), else from stdin, typed at a prompt without echo when stdin is a terminal. Leading
 * and trailing whitespace (a file's final newline) is dropped. `what` names the secret in messages.
 */
export async function readSecret(file: string | undefined, what: string, prompt: string): Promise<string> {
  let text: string;
  if (file !== undefined && file !== "-") {
    try {
      const data = await readFile(file);
      if (data.length > MAX_SECRET_BYTES) throw new UsageError(`${file}: too large for ${what}`);
      text = data.toString("utf8");
    } catch (err) {
      if (err instanceof UsageError) throw err;
      throw new UsageError(`cannot read ${what} from ${file}: ${(err as Error).message}`);
    }
  } else if (process.stdin.isTTY) {
    text = await promptHidden(prompt);
  } else {
    text = await readStdin();
  }
  const secret = text.trim();
  if (secret === "") throw new UsageError(`${what} is empty`);
  return secret;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin) {
    const buffer = Buffer.from(chunk);
    size += buffer.length;
    if (size > MAX_SECRET_BYTES) throw new UsageError("stdin: too large for a token");
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** The parts of a terminal's input stream that a hidden prompt uses. */
export interface TerminalInput {
  setRawMode(mode: boolean): unknown;
  resume(): unknown;
  pause(): unknown;
  on(event: "data", listener: (chunk: Buffer) => void): unknown;
  off(event: "data", listener: (chunk: Buffer) => void): unknown;
}

/**
 * Asks on `output` and reads one line from the terminal without echoing it. Ctrl-C or Ctrl-D gives
 * up. Exported for its test; the streams default to the process's own.
 */
export function promptHidden(
  prompt: string,
  stdin: TerminalInput = process.stdin,
  output: { write(text: string): unknown } = process.stderr,
): Promise<string> {
  return new Promise((resolve, reject) => {
    // Echo goes off before the prompt shows: a token typed or pasted the instant the prompt appears
    // would otherwise be echoed by the terminal while it is still in cooked mode.
    stdin.setRawMode(true);
    output.write(prompt);
    stdin.resume();
    let typed = "";
    const finish = (error?: Error) => {
      stdin.off("data", onData);
      stdin.setRawMode(false);
      stdin.pause();
      output.write("\n");
      if (error) reject(error);
      else resolve(typed);
    };
    const onData = (chunk: Buffer) => {
      for (const ch of chunk.toString("utf8")) {
        if (ch === "\r" || ch === "\n") return finish();
        if (ch === "\u0003" || ch === "\u0004") return finish(new UsageError("no token given"));
        if (ch === "\u007f" || ch === "\b") typed = typed.slice(0, -1);
        else if (typed.length < MAX_SECRET_BYTES) typed += ch;
      }
    };
    stdin.on("data", onData);
  });
}
