import type { TmuxClient } from "../tmux/client.js";

/** Lines at the bottom of a pane that prompts and spinners are looked for in (FORMATS.md). */
export const SCREEN_BOTTOM_LINES = 30;

/**
 * The bottom of a pane's visible screen as plain text (tmux renders it without escapes), trailing
 * blank lines removed, at most SCREEN_BOTTOM_LINES lines.
 */
export async function readPaneBottom(tmux: TmuxClient, paneId: string): Promise<string> {
  const text = await tmux.run(["capture-pane", "-p", "-t", paneId]);
  const lines = text.replace(/\s+$/, "").split("\n");
  return lines.slice(-SCREEN_BOTTOM_LINES).join("\n");
}
