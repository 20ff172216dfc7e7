import { Code, ConnectError } from "@connectrpc/connect";

/**
 * Runs tasks one at a time per key (chat sends per session), so two messages sent at once arrive one
 * after the other instead of interleaving their keystrokes. At most `maxQueued` tasks wait per key;
 * more is RESOURCE_EXHAUSTED rather than an unbounded queue.
 */
export class KeyedLock {
  private readonly tails = new Map<string, { promise: Promise<void>; waiting: number }>();

  constructor(private readonly maxQueued: number) {}

  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const entry = this.tails.get(key) ?? { promise: Promise.resolve(), waiting: 0 };
    if (entry.waiting >= this.maxQueued) {
      throw new ConnectError(
        `${entry.waiting} messages are already waiting to be typed into ${key}; try again when they are delivered`,
        Code.ResourceExhausted,
      );
    }
    entry.waiting++;
    const previous = entry.promise;
    let release: () => void = () => {};
    entry.promise = new Promise<void>((resolve) => {
      release = resolve;
    });
    this.tails.set(key, entry);
    try {
      await previous;
      return await task();
    } finally {
      entry.waiting--;
      release();
      if (entry.waiting === 0 && this.tails.get(key) === entry) this.tails.delete(key);
    }
  }
}
