/**
 * How a viewer's size request is treated (docs/terminal.md, "Sizing"):
 * - `follow`: no other tmux client is attached to the session, so the window follows this viewer;
 * - `take-over`: others are attached but the viewer explicitly asked to fit the window to its
 *   screen ("take over"), so the window is set to its size;
 * - `keep`: others are attached, so the window keeps its size and this viewer fits it (its tmux
 *   client is sized to the window and does not count for the window's size).
 * The user's own tmux clients (in a real terminal) and other viewers count as other clients alike.
 */
export type SizeDecision = "follow" | "take-over" | "keep";

/** Decides a size request from the number of other tmux clients and the viewer's `take_over`. */
export function decideSize(otherClients: number, takeOver: boolean): SizeDecision {
  if (otherClients === 0) return "follow";
  return takeOver ? "take-over" : "keep";
}
