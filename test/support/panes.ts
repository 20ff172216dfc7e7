import type { PaneInfo } from "../../services/node/tmux/panes.js";

/**
 * A pane as `list-panes` would report it, for code that takes PaneInfo without a tmux server (status
 * fixtures, benchmarks): a created session's active pane, with `overrides` for what a case is about.
 */
export function testPane(overrides: Partial<PaneInfo> = {}): PaneInfo {
  return {
    sessionName: "work",
    sessionId: "$1",
    sessionCreated: 1_700_000_000,
    sessionAttached: 0,
    sessionActivity: 1_700_000_100,
    windowActivity: 1_700_000_200,
    sessionOrigin: "created",
    windowId: "@1",
    windowActive: true,
    windowWidth: 80,
    windowHeight: 24,
    paneId: "%1",
    paneActive: true,
    panePid: 4242,
    paneCurrentCommand: "bash",
    paneCurrentPath: "/srv",
    paneDead: false,
    commandExitStatus: undefined,
    supervision: undefined,
    deadStatus: undefined,
    deadTime: undefined,
    alternateOn: false,
    historySize: 0,
    cursorX: 0,
    cursorY: 0,
    paneTitle: "",
    ...overrides,
  };
}
