/**
 * A Map that holds at most `capacity` entries, for the caches that must not grow without bound on a
 * machine with thousands of past sessions, logs or peers. Setting a key makes it the newest (an
 * existing key moves to the end); past the capacity the oldest entry is dropped and handed to
 * `onEvict`, so an entry that holds something (an open database) can release it. Everything else is a
 * plain Map.
 */
export class BoundedMap<K, V> extends Map<K, V> {
  constructor(
    readonly capacity: number,
    private readonly onEvict?: (key: K, value: V) => void,
  ) {
    super();
  }

  /** Sets `key` as the newest entry, then drops the oldest ones past the capacity. */
  override set(key: K, value: V): this {
    super.delete(key);
    super.set(key, value);
    while (this.size > this.capacity) {
      const [oldest] = this.entries();
      if (oldest === undefined) break;
      super.delete(oldest[0]);
      this.onEvict?.(oldest[0], oldest[1]);
    }
    return this;
  }
}
