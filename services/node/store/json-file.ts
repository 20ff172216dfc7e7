import { mkdir, open, readFile, rename } from "node:fs/promises";
import { dirname } from "node:path";
import type { Logger } from "../../common/log.js";

/** Checks parsed JSON and returns the typed value, or throws an Error saying what is wrong. */
export type Validator<T> = (value: unknown) => T;

/**
 * One JSON file under `$STARAGENT_HOME`: written to a temporary file, synced and renamed so a crash
 * never leaves half a file; read with validation. A file that cannot be parsed or validated is moved
 * aside to `<file>.corrupt-<time>` (never deleted), logged, and replaced by the empty value.
 * Writes are serialised so concurrent updates never interleave.
 */
export class JsonFile<T> {
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    readonly path: string,
    private readonly validate: Validator<T>,
    private readonly empty: () => T,
    private readonly log: Logger,
    private readonly mode = 0o600,
  ) {}

  /** Reads the file; a missing file is the empty value. */
  async read(): Promise<T> {
    let text: string;
    try {
      text = await readFile(this.path, "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return this.empty();
      throw err;
    }
    try {
      return this.validate(JSON.parse(text));
    } catch (err) {
      const aside = `${this.path}.corrupt-${new Date().toISOString().replace(/[:.]/g, "-")}`;
      try {
        await rename(this.path, aside);
      } catch (renameErr) {
        // A concurrent read already moved it aside (and logged it): read what is there now.
        if ((renameErr as NodeJS.ErrnoException).code === "ENOENT") return this.read();
        throw renameErr;
      }
      this.log.warn("unreadable state file kept aside and replaced", {
        file: this.path,
        keptAs: aside,
        error: err instanceof Error ? err.message : String(err),
      });
      return this.empty();
    }
  }

  /** Replaces the file's content atomically. */
  async write(value: T): Promise<void> {
    await mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
    const tmp = `${this.path}.tmp-${process.pid}-${Date.now()}`;
    const handle = await open(tmp, "w", this.mode);
    try {
      await handle.writeFile(`${JSON.stringify(value, null, 2)}\n`, "utf8");
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tmp, this.path);
  }

  /** Reads, applies `change`, and writes back, one update at a time; returns the new value. */
  update(change: (current: T) => T): Promise<T> {
    const next = this.queue.then(async () => {
      const value = change(await this.read());
      await this.write(value);
      return value;
    });
    this.queue = next.catch(() => undefined);
    return next;
  }
}

/** Asserts `value` is a plain object (not an array or null). */
export function expectObject(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new Error(`${what} must be a JSON object`);
  }
  return value as Record<string, unknown>;
}
