import type { IDisposable, ITerminalAddon, Terminal } from "@xterm/xterm";
import { osc52Text } from "../osc52.js";

/** The OSC number of the clipboard sequence. */
const OSC_CLIPBOARD = 52;

/**
 * Lets a program in the terminal copy to the clipboard with OSC 52 (as tmux's `set-clipboard` sends
 * it). The text goes to `onCopy`, which decides how to reach the clipboard; requests to read the
 * clipboard are never answered. Every OSC 52 is consumed, so xterm does not act on it itself.
 */
export class Osc52Addon implements ITerminalAddon {
  private handler: IDisposable | undefined;

  constructor(private readonly onCopy: (text: string) => void) {}

  /** Registers the OSC 52 handler on the terminal's parser. */
  activate(terminal: Terminal): void {
    this.handler = terminal.parser.registerOscHandler(OSC_CLIPBOARD, (data) => {
      const text = osc52Text(data);
      if (text !== undefined) this.onCopy(text);
      return true;
    });
  }

  /** Removes the handler. */
  dispose(): void {
    this.handler?.dispose();
    this.handler = undefined;
  }
}
