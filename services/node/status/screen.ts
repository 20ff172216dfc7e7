import type { TmuxClient } from "../tmux/client.js";

/** Lines at the bottom of a pane that prompts and spinners are looked for in (docs/status.md). */
export const SCREEN_BOTTOM_LINES = 30;

/**
 * A pane's whole visible screen as plain text (tmux renders it without escapes), trailing blank lines
 * removed. Only the visible area: never the history, whose capture can block the tmux server.
 */
export async function readPaneScreen(tmux: TmuxClient, paneId: string): Promise<string> {
  const text = await tmux.run(["capture-pane", "-p", "-t", paneId]);
  return text.replace(/\s+$/, "");
}

/** The bottom SCREEN_BOTTOM_LINES lines of a screen read by `readPaneScreen`. */
export function paneBottom(screen: string): string {
  return screen.split("\n").slice(-SCREEN_BOTTOM_LINES).join("\n");
}
