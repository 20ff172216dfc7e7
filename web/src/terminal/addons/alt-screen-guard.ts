import type { IDisposable, ITerminalAddon, Terminal } from "@xterm/xterm";

/** xterm's alternate-screen modes (DECSET 47, 1047, 1049). */
const ALT_SCREEN_MODES = new Set([47, 1047, 1049]);

/**
 * Ignores requests to switch to the alternate screen. tmux redraws its window in the alternate screen,
 * and a terminal there keeps no scrollback; in the normal buffer every line tmux draws stays
 * scrollable. A DECSET/DECRST that names other modes too passes on to xterm unchanged.
 */
export class AltScreenGuardAddon implements ITerminalAddon {
  private readonly handlers: IDisposable[] = [];

  /** Registers the CSI handlers on the terminal's parser. */
  activate(terminal: Terminal): void {
    this.handlers.push(
      terminal.parser.registerCsiHandler({ prefix: "?", final: "h" }, (params) => isOnlyAltScreen(params)),
      terminal.parser.registerCsiHandler({ prefix: "?", final: "l" }, (params) => isOnlyAltScreen(params)),
    );
  }

  /** Removes the handlers: the terminal then honours the alternate screen again. */
  dispose(): void {
    for (const h of this.handlers.splice(0)) h.dispose();
  }
}

/** True when a DECSET/DECRST names only alternate-screen modes (which are then ignored). */
export function isOnlyAltScreen(params: readonly (number | number[])[]): boolean {
  return params.length > 0 && params.every((p) => typeof p === "number" && ALT_SCREEN_MODES.has(p));
}
