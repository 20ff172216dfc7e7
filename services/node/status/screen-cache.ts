import type { TmuxClient } from "../tmux/client.js";
import type { PaneInfo } from "../tmux/panes.js";
import { readPaneScreen } from "./screen.js";

/** A pane's visible screen read, reused while the pane shows nothing new. */
interface ScreenRead {
  readonly key: string;
  readonly at: number;
  readonly text: Promise<string>;
}

/**
 * The visible screens of panes, read through tmux at most once per `maxAgeMs` per pane while the pane
 * shows nothing new (same activity, title, size and screen): reading spawns tmux, the dearest thing a
 * poll does. A screen that cannot be read is "".
 */
export class ScreenCache {
  private readonly screens = new Map<string, ScreenRead>();

  constructor(private readonly tmux: TmuxClient) {}

  /** The pane's visible screen, reused when read less than `maxAgeMs` ago and the pane shows nothing new. */
  read(pane: PaneInfo, maxAgeMs: number): Promise<string> {
    const key = `${pane.sessionActivity}|${pane.paneTitle}|${pane.windowWidth}x${pane.windowHeight}|${pane.alternateOn}`;
    const cached = this.screens.get(pane.paneId);
    const now = Date.now();
    if (cached && cached.key === key && now - cached.at < maxAgeMs) return cached.text;
    const text = readPaneScreen(this.tmux, pane.paneId).catch(() => "");
    this.screens.set(pane.paneId, { key, at: now, text });
    return text;
  }

  /** Forgets the panes not in `live`. */
  prune(live: ReadonlySet<string>): void {
    for (const id of this.screens.keys()) if (!live.has(id)) this.screens.delete(id);
  }
}
