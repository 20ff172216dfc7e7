import type { TmuxClient } from "../tmux/client.js";

/** Fewest history lines a request may ask for: less would cut most conversations mid-message. */
export const MIN_HISTORY_LINES = 100;

/**
 * A pane's transcript for the chat parsers: up to `historyLines` lines of scrollback followed by the
 * visible screen, wrapped lines joined (`-J`), without escape sequences. Full-screen TUIs on the
 * alternate screen have no scrollback, so for them this is the visible screen.
 */
export async function captureTranscript(tmux: TmuxClient, paneId: string, historyLines: number): Promise<string[]> {
  const text = await tmux.run(["capture-pane", "-p", "-J", "-S", `-${historyLines}`, "-t", paneId]);
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}
