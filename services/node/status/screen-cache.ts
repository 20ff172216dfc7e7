import type { TmuxClient } from "../tmux/client.js";
import type { PaneInfo } from "../tmux/panes.js";
import { readPaneScreen } from "./screen.js";

/** A pane's visible screen read, reused while the pane shows nothing new. */
interface ScreenRead {
  readonly key: string;
  readonly at: number;
  readonly text: Promise<string>;
  /** Which capture this is: numbered per cache, so two reads tell whether tmux was asked twice. */
  readonly capture: number;
}

/**
 * The visible screens of panes, read through tmux at most once per `maxAgeMs` per pane while the pane
 * shows nothing new (same activity, title, size and screen): reading spawns tmux, the dearest thing a
 * poll does. A screen that cannot be read is "".
 */
export class ScreenCache {
  private readonly screens = new Map<string, ScreenRead>();
  private captures = 0;

  constructor(private readonly tmux: TmuxClient) {}

  /** The pane's visible screen, reused when read less than `maxAgeMs` ago and the pane shows nothing new. */
  read(pane: PaneInfo, maxAgeMs: number): Promise<string> {
    return this.readCapture(pane, maxAgeMs).then((r) => r.text);
  }

  /** As `read`, with the number of the capture the screen comes from. */
  readCapture(pane: PaneInfo, maxAgeMs: number): Promise<{ text: string; capture: number }> {
    const key = `${pane.sessionActivity}|${pane.paneTitle}|${pane.windowWidth}x${pane.windowHeight}|${pane.alternateOn}`;
    let read = this.screens.get(pane.paneId);
    const now = Date.now();
    if (!read || read.key !== key || now - read.at >= maxAgeMs) {
      this.captures += 1;
      read = { key, at: now, text: readPaneScreen(this.tmux, pane.paneId).catch(() => ""), capture: this.captures };
      this.screens.set(pane.paneId, read);
    }
    const { text, capture } = read;
    return text.then((t) => ({ text: t, capture }));
  }

  /**
   * The pane's next read asks tmux again. The key's activity time has a resolution of a second, so a
   * screen read while a program was still drawing could otherwise stand for up to `maxAgeMs`.
   */
  expire(paneId: string): void {
    this.screens.delete(paneId);
  }

  /** Forgets the panes not in `live`. */
  prune(live: ReadonlySet<string>): void {
    for (const id of this.screens.keys()) if (!live.has(id)) this.screens.delete(id);
  }
}
