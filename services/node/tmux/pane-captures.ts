import { randomBytes } from "node:crypto";
import { NEXT_COMMAND, type TmuxArgument, type TmuxClient, type TmuxResult } from "./client.js";

/** Random bytes in each capture's marker: no pane can print a marker it cannot predict. */
const NONCE_BYTES = 8;

/** One pane to capture: its id and `capture-pane`'s flags besides `-p` and `-t` (`-J`, `-e`, `-S -N`). */
export interface CaptureRequest {
  readonly paneId: string;
  readonly flags?: readonly string[];
}

/**
 * Captures several panes with one tmux invocation, in order: `[i]` is the text of `requests[i]` as
 * `capture-pane -p` prints it, or undefined for a pane that could not be captured (it has gone).
 *
 * Why one invocation: each tmux process costs a fork and exec in this process, a tmux client and a
 * server round trip (a few ms of CPU each), so a look that captured every live agent's screen one
 * process at a time spent most of a core on spawning alone at 100 sessions. Each capture is preceded
 * by a marker line (`display-message -p`) carrying a nonce made for this call, so the texts can be
 * split apart whatever the panes show. tmux stops an invocation at the first command that fails (a
 * pane gone since it was listed): the captures before it are kept, the failed one is undefined, and
 * those after it are asked again in a further invocation. `exec` runs the invocation (default
 * `tmux.exec`, a spawn; the watch loop's goes through the pane lister's shell).
 */
export async function capturePanes(
  tmux: TmuxClient,
  requests: readonly CaptureRequest[],
  exec: (args: readonly TmuxArgument[]) => Promise<TmuxResult> = (args) => tmux.exec(args),
): Promise<(string | undefined)[]> {
  const texts: (string | undefined)[] = new Array(requests.length).fill(undefined);
  let from = 0;
  while (from < requests.length) {
    const nonce = randomBytes(NONCE_BYTES).toString("hex");
    const marker = (i: number) => `\x1e${nonce}:${i}`;
    const args: TmuxArgument[] = [];
    for (let i = from; i < requests.length; i++) {
      const request = requests[i] as CaptureRequest;
      if (i > from) args.push(NEXT_COMMAND);
      args.push("display-message", "-p", marker(i), NEXT_COMMAND);
      args.push("capture-pane", "-p", ...(request.flags ?? []), "-t", request.paneId);
    }
    const result = await exec(args);
    const { out, last } = splitCaptures(result.stdout, from, requests.length, marker);
    for (const [i, text] of out) texts[i] = text;
    if (result.code === 0 || last === undefined) break;
    // The last marker printed is the capture that failed: the rest is asked again.
    texts[last] = undefined;
    from = last + 1;
  }
  return texts;
}

/**
 * The texts between the markers of captures `from` to `to - 1` in one invocation's output, and the
 * index of the last marker found (undefined when none was: tmux ran no command).
 */
function splitCaptures(
  stdout: string,
  from: number,
  to: number,
  marker: (i: number) => string,
): { out: Map<number, string>; last: number | undefined } {
  const out = new Map<number, string>();
  let last: number | undefined;
  let at = stdout.indexOf(`${marker(from)}\n`);
  for (let i = from; i < to && at >= 0; i++) {
    const start = at + marker(i).length + 1;
    const next = i + 1 < to ? stdout.indexOf(`${marker(i + 1)}\n`, start) : -1;
    out.set(i, stdout.slice(start, next < 0 ? undefined : next));
    last = i;
    at = next;
  }
  return { out, last };
}
