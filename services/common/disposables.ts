/**
 * Cleanup functions collected while something is set up (listeners, timers, subscriptions) and run
 * together once it ends, so every `addEventListener` has its removal next to it and none is
 * forgotten on an early return or a throw.
 */
export class Disposables {
  private readonly items: Array<() => void> = [];
  private disposed = false;

  /** True once `dispose` has run. */
  get isDisposed(): boolean {
    return this.disposed;
  }

  /** Keeps `dispose` to run at the end; runs it at once when the store is already disposed. */
  add(dispose: () => void): void {
    if (this.disposed) dispose();
    else this.items.push(dispose);
  }

  /** Runs every cleanup once, newest first; later calls do nothing. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    for (const dispose of this.items.splice(0).reverse()) dispose();
  }
}

/**
 * Calls `listener` once when `signal` aborts (at once when it already has); returns the removal of
 * the listener, for a Disposables store or a `finally`.
 */
export function onAbort(signal: AbortSignal, listener: () => void): () => void {
  if (signal.aborted) {
    listener();
    return () => {};
  }
  signal.addEventListener("abort", listener, { once: true });
  return () => signal.removeEventListener("abort", listener);
}
