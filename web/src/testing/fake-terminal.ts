import type { IDisposable, Terminal } from "@xterm/xterm";

type Handler = (arg: never) => boolean;

/**
 * The parts of an xterm.js Terminal the addons use, without a browser: parser handlers the test
 * calls as xterm would, line feeds it fires, a buffer position it sets, and writes it completes.
 */
export class FakeTerminal {
  readonly csi = new Map<string, Handler>();
  readonly osc = new Map<number, Handler>();
  private readonly lineFeeds = new Set<() => void>();
  rows = 24;
  buffer = { active: { type: "normal" as "normal" | "alternate", baseY: 100, viewportY: 100 } };
  modes = { mouseTrackingMode: "none" as string };
  /** Lines scrolled by `scrollLines`, in order. */
  readonly scrolled: number[] = [];
  /** Writes not yet completed: call one to complete it. */
  readonly pendingWrites: Array<() => void> = [];

  readonly parser = {
    registerCsiHandler: (id: { prefix?: string; final: string }, handler: Handler): IDisposable => {
      const key = `${id.prefix ?? ""}${id.final}`;
      this.csi.set(key, handler);
      return { dispose: () => this.csi.delete(key) };
    },
    registerOscHandler: (ident: number, handler: Handler): IDisposable => {
      this.osc.set(ident, handler);
      return { dispose: () => this.osc.delete(ident) };
    },
  };

  onLineFeed(listener: () => void): IDisposable {
    this.lineFeeds.add(listener);
    return { dispose: () => this.lineFeeds.delete(listener) };
  }

  /** As xterm does for each line feed it processes. */
  lineFeed(times = 1): void {
    for (let i = 0; i < times; i++) for (const l of this.lineFeeds) l();
  }

  get lineFeedListeners(): number {
    return this.lineFeeds.size;
  }

  scrollLines(n: number): void {
    this.scrolled.push(n);
  }

  write(_data: Uint8Array | string, done?: () => void): void {
    this.pendingWrites.push(() => done?.());
  }

  /** This fake where the addons expect a Terminal. */
  get asTerminal(): Terminal {
    return this as unknown as Terminal;
  }
}
