import { Code, ConnectError } from "@connectrpc/connect";

/**
 * Keystrokes that may wait behind one key's holder (a prompt's answer holds it up to a few seconds):
 * far above what a person types meanwhile, and a bound on what a client sending input without end
 * can make the machine hold.
 */
export const MAX_WAITING_KEYSTROKES = 1024;

interface Tail {
  /** Settles once the last task queued so far has run. */
  promise: Promise<void>;
  /** Tasks queued or running, of both kinds (the key is free at 0). */
  pending: number;
  /** Of them, messages (`run`): bounded by maxQueued. */
  messages: number;
  /** Of them, keystrokes (`runWhenFree`): bounded by MAX_WAITING_KEYSTROKES. */
  keystrokes: number;
}

/**
 * Runs tasks one at a time per key (chat sends, prompt answers and terminal keystrokes per session), so
 * two messages sent at once arrive one after the other instead of interleaving their keystrokes. At most
 * `maxQueued` messages and MAX_WAITING_KEYSTROKES keystrokes wait per key; more is RESOURCE_EXHAUSTED
 * rather than an unbounded queue.
 */
export class KeyedLock {
  private readonly tails = new Map<string, Tail>();

  constructor(private readonly maxQueued: number) {}

  /** Runs `task` (a chat message or a prompt's answer being typed) once every earlier task of `key` ran. */
  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const waiting = this.tails.get(key)?.messages ?? 0;
    if (waiting >= this.maxQueued) {
      throw new ConnectError(
        `${waiting} messages are already waiting to be typed into ${key}; try again when they are delivered`,
        Code.ResourceExhausted,
      );
    }
    return this.queue(key, "messages", task);
  }

  /**
   * Runs the synchronous `task` (one terminal keystroke's write) under the lock of `key`: at once, with
   * no promise in between, when nothing holds the key (so ordinary typing pays nothing for the lock);
   * otherwise queued behind the holders, in call order, and the returned promise settles once it ran.
   * Waiting keystrokes do not count against `maxQueued` (a person typing while an answer is typed must
   * not make a chat send fail), but against MAX_WAITING_KEYSTROKES.
   */
  runWhenFree(key: string, task: () => void): Promise<void> | undefined {
    const tail = this.tails.get(key);
    if (!tail) {
      task();
      return undefined;
    }
    if (tail.keystrokes >= MAX_WAITING_KEYSTROKES) {
      return Promise.reject(
        new ConnectError(
          `${tail.keystrokes} keystrokes already wait for ${key} while a message or an answer is typed; this one was not typed`,
          Code.ResourceExhausted,
        ),
      );
    }
    return this.queue(key, "keystrokes", async () => task());
  }

  /** Queues `task` behind the current holders of `key`, counted as `kind`. */
  private async queue<T>(key: string, kind: "messages" | "keystrokes", task: () => Promise<T>): Promise<T> {
    const entry = this.tails.get(key) ?? { promise: Promise.resolve(), pending: 0, messages: 0, keystrokes: 0 };
    entry.pending++;
    entry[kind]++;
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
      entry.pending--;
      entry[kind]--;
      release();
      if (entry.pending === 0 && this.tails.get(key) === entry) this.tails.delete(key);
    }
  }
}
