import { randomBytes } from "node:crypto";
import { sleep } from "../../common/async-queue.js";
import type { TmuxClient } from "../tmux/client.js";

/** Longest wait for the pasted text to show on screen before pressing Enter anyway. */
export const PASTE_ECHO_TIMEOUT_MS = 1_000;
/** Pause between looks at the screen while waiting for the paste to show. */
const PASTE_ECHO_POLL_MS = 25;

/**
 * Types `text` into a pane as one message: loads it into a uniquely named tmux buffer through stdin
 * (never a command line, so no quoting and no length limit of argv), pastes it bracketed so the CLI
 * takes line breaks as part of the text, waits until the screen shows the paste (a CLI that reads the
 * Enter within the same burst would take it as a line break), then presses Enter. The buffer is
 * deleted by the paste, or explicitly when the paste fails. `submitQuietMs`: the CLI's module's
 * `submitQuietMs`, the quiet after the paste shows before Enter submits.
 */
export async function pasteMessage(tmux: TmuxClient, paneId: string, text: string, submitQuietMs = 0): Promise<void> {
  const buffer = `staragent-chat-${randomBytes(8).toString("hex")}`;
  await tmux.run(["load-buffer", "-b", buffer, "-"], { input: text });
  const before = await screen(tmux, paneId).catch(() => "");
  try {
    await tmux.run(["paste-buffer", "-p", "-d", "-b", buffer, "-t", paneId]);
  } catch (err) {
    await tmux.run(["delete-buffer", "-b", buffer]).catch(() => undefined);
    throw err;
  }
  const deadline = Date.now() + PASTE_ECHO_TIMEOUT_MS;
  while (Date.now() < deadline && (await screen(tmux, paneId).catch(() => before)) === before) {
    await sleep(PASTE_ECHO_POLL_MS);
  }
  // The CLI's own timer, which no screen shows: the quiet it needs after the keys it has drawn (its
  // module says), counted from the echo, since a busy CLI may read the keys late.
  if (submitQuietMs > 0) await sleep(submitQuietMs);
  await tmux.run(["send-keys", "-t", paneId, "Enter"]);
}

function screen(tmux: TmuxClient, paneId: string): Promise<string> {
  return tmux.run(["capture-pane", "-p", "-t", paneId]);
}
