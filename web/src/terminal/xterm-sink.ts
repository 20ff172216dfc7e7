import type { Terminal } from "@xterm/xterm";
import type { EchoMeterAddon } from "./addons/echo-meter.js";
import type { ScrollbackRefreshAddon } from "./addons/scrollback-refresh.js";
import { concat, pushIntoScrollback, scrollbackPart } from "./history.js";
import type { CellSize, TerminalSink } from "./terminal-connection.js";

/** What drawing into the terminal works with besides the terminal itself. */
export interface XtermSinkParts {
  readonly scrollback: ScrollbackRefreshAddon;
  readonly echo: EchoMeterAddon;
  /** The window's size (and this viewer's ownership of it) reached the terminal. */
  applyWindow(size: CellSize, owner: boolean): void;
  /** A new attachment at this window size: fit again if the page's size differs. */
  attached(size: CellSize, owner: boolean): void;
}

/**
 * Draws a terminal connection into xterm.js. A new attachment redraws everything: the pane's history
 * becomes the scrollback and the live output draws the screen, so nothing from an earlier attachment
 * is shown twice; a scrollback refresh under way then returns to where the person was scrolling.
 */
export function xtermSink(term: Terminal, parts: XtermSinkParts): TerminalSink {
  const encoder = new TextEncoder();
  return {
    attached: ({ history, screenLines, windowSize, sizeOwner }) => {
      const scrolledUp = parts.scrollback.takeScrollBack();
      term.reset();
      parts.applyWindow(windowSize, sizeOwner);
      if (screenLines > 0) {
        const scrollback = scrollbackPart(history, screenLines);
        if (scrollback.length > 0) term.write(concat(scrollback, encoder.encode(pushIntoScrollback(term.rows))));
      } else if (history.length > 0) {
        term.write(history);
      }
      term.write("", () => parts.scrollback.historyWritten(scrolledUp));
      // The page may have changed size while attaching (a bar appearing, a rotation): ask again for the
      // size it has now if that is not the window's.
      parts.attached(windowSize, sizeOwner);
    },
    output: (data, done) => parts.echo.write(data, done),
    // After the output that came before it is drawn: the bytes tmux drew at the old size go into a
    // terminal of the old size, and the redraw that follows the event into one of the new size.
    resized: (windowSize, sizeOwner) => term.write("", () => parts.applyWindow(windowSize, sizeOwner)),
  };
}
