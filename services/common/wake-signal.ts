import { Disposables, onAbort } from "./disposables.js";

/**
 * A wake-up flag that async loops sleep on: producers `wake()` it (new output, a file written, an
 * API change), the loop `wait`s for it with a time limit and an abort signal. The flag stays set
 * until the loop `take`s it, so a wake that comes while the loop is busy is not lost.
 */
export class WakeSignal {
  private woken = false;
  private readonly waiters = new Set<() => void>();

  /** True while a wake has come that nobody took yet. */
  get pending(): boolean {
    return this.woken;
  }

  /** Sets the flag and ends every wait. */
  wake(): void {
    this.woken = true;
    for (const waiter of [...this.waiters]) waiter();
  }

  /** Clears the flag (the loop is about to do the work it asked for); true when it was set. */
  take(): boolean {
    const woken = this.woken;
    this.woken = false;
    return woken;
  }

  /**
   * Resolves once woken (at once when the flag is already set), after `ms` (none: no time limit) or
   * when `signal` aborts, whichever comes first; true when woken. The flag is left for `take`.
   * `unref`: the time limit alone does not keep the process alive (a background check).
   */
  wait(ms?: number, signal?: AbortSignal, options: { readonly unref?: boolean } = {}): Promise<boolean> {
    if (this.woken) return Promise.resolve(true);
    if (signal?.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const cleanup = new Disposables();
      const done = () => {
        cleanup.dispose();
        resolve(this.woken);
      };
      this.waiters.add(done);
      cleanup.add(() => this.waiters.delete(done));
      if (ms !== undefined) {
        const timer = setTimeout(done, ms);
        if (options.unref) timer.unref();
        cleanup.add(() => clearTimeout(timer));
      }
      if (signal) cleanup.add(onAbort(signal, done));
    });
  }
}
