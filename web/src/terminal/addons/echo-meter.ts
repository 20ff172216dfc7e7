import type { ITerminalAddon, Terminal } from "@xterm/xterm";

/** Keystroke-to-echo samples kept (the benchmark reads them; the status line shows their median). */
const MAX_ECHO_SAMPLES = 500;
/** Output arriving later than this after a key press is not counted as that key's echo. */
const ECHO_WINDOW_MS = 2_000;
/** The median shown is over this many newest samples, so it follows the connection's current state. */
const MEDIAN_OF = 21;

/**
 * Measures keystroke-to-echo: from a printable key's press (its event time) to the next output being
 * written into the terminal. Output that arrives later than `ECHO_WINDOW_MS` is not that key's echo.
 * The meter listens on the element the terminal is opened in (capturing, before xterm sees the key).
 */
export class EchoMeterAddon implements ITerminalAddon {
  /** Milliseconds from a key press to its echo being written into the terminal, newest last. */
  readonly samples: number[] = [];
  /** Median of the newest samples (0 before the first). */
  median = 0;
  private terminal: Terminal | undefined;
  private keyAt: number | undefined;

  /**
   * @param element where key presses are watched (the terminal's host element)
   * @param onSample called after each new sample (to show the median)
   * @param now the clock the key events' `timeStamp` is on
   */
  constructor(
    private readonly element: EventTarget,
    private readonly onSample: () => void,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Starts watching key presses. */
  activate(terminal: Terminal): void {
    this.terminal = terminal;
    this.element.addEventListener("keydown", this.onKeyDown, { capture: true });
  }

  /** Writes output into the terminal, timing it as the echo of a pending key press; `done` after. */
  write(data: Uint8Array, done: () => void): void {
    const keyAt = this.keyAt;
    this.terminal?.write(data, () => {
      if (keyAt !== undefined && this.keyAt === keyAt) {
        this.keyAt = undefined;
        const sample = this.now() - keyAt;
        if (sample < ECHO_WINDOW_MS) this.record(sample);
      }
      done();
    });
  }

  /** Stops watching key presses. */
  dispose(): void {
    this.element.removeEventListener("keydown", this.onKeyDown, { capture: true });
    this.terminal = undefined;
  }

  private readonly onKeyDown = (e: Event) => {
    const k = e as KeyboardEvent;
    if (k.key.length === 1 && !k.ctrlKey && !k.metaKey && !k.altKey) this.keyAt = k.timeStamp;
  };

  private record(sample: number): void {
    this.samples.push(sample);
    if (this.samples.length > MAX_ECHO_SAMPLES) this.samples.shift();
    const recent = this.samples.slice(-MEDIAN_OF).sort((a, b) => a - b);
    this.median = recent[Math.floor(recent.length / 2)] ?? 0;
    this.onSample();
  }
}
