/**
 * Lines of tmux history (scrollback) a request gets when it asks for 0: GetChat parses them into
 * messages and Attach sends them before the live output. One figure for both, so a session's chat and
 * its terminal reach equally far back (the dashboard asks for the same).
 */
export const DEFAULT_HISTORY_LINES = 2_000;

/** Most history lines a request may ask for: a capture blocks the whole tmux server while it runs (docs/terminal.md, "Limits and errors"). */
export const MAX_HISTORY_LINES = 10_000;
