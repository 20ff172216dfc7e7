import { constants, type Stats } from "node:fs";
import { open, rename, stat } from "node:fs/promises";
import { dirname } from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import * as v from "valibot";
import { writeFileAtomic } from "./atomic-write.js";
import type { Logger } from "./log.js";

/** Checks parsed JSON and returns the typed value, or throws an Error saying what is wrong. */
export type Validator<T> = (value: unknown) => T;

/**
 * The validator of a state file from its valibot schema (the file's type is inferred from the same
 * schema): the value the schema outputs, or an Error naming `file`, where in it, and what is wrong.
 */
export function schemaValidator<S extends v.GenericSchema>(schema: S, file: string): Validator<v.InferOutput<S>> {
  return (value) => {
    const result = v.safeParse(schema, value);
    if (result.success) return result.output;
    const [issue] = result.issues;
    const where = v.getDotPath(issue);
    throw new Error(`${file}${where ? ` at ${where}` : ""}: ${issue.message}`);
  };
}

/**
 * Largest state file read. StarAgent's own files stay far below it (a few hundred bytes per session);
 * anything bigger is not one of them, and reading it would cost memory and time on every start.
 */
export const MAX_STATE_FILE_BYTES = 16 * 1024 * 1024;

/** A bad file that could not be moved aside: what it looked like, so it is not read again until it changes. */
interface StuckFile {
  readonly signature: string;
  readonly problem: string;
  readonly moveError: string;
}

/**
 * One JSON file under `$STARAGENT_HOME`: written to a temporary file, synced and renamed so a crash
 * never leaves half a file; read with validation. A file that cannot be read, parsed or validated (a
 * directory or a FIFO in its place, no permission, larger than MAX_STATE_FILE_BYTES, corrupt) is moved
 * aside to `<file>.corrupt-<time>` (never deleted), logged, and replaced by the empty value. When it
 * cannot even be moved aside, it is logged once, read as empty and not read again until it changes,
 * and never overwritten: updates fail with FAILED_PRECONDITION saying what to fix. Writes are
 * serialised so concurrent updates never interleave.
 */
export class JsonFile<T> {
  private queue: Promise<unknown> = Promise.resolve();
  private stuck: StuckFile | undefined;

  constructor(
    readonly path: string,
    private readonly validate: Validator<T>,
    private readonly empty: () => T,
    private readonly log: Logger,
    private readonly mode = 0o600,
    private readonly maxBytes = MAX_STATE_FILE_BYTES,
  ) {}

  /** Reads the file; a missing or unusable file is the empty value (see the class comment). Never throws. */
  async read(): Promise<T> {
    let info: Stats;
    try {
      info = await stat(this.path);
    } catch (err) {
      // No such file, or a file where a folder of its path should be: nothing to read (writes will say).
      if (errorCode(err) === "ENOENT" || errorCode(err) === "ENOTDIR") {
        this.stuck = undefined;
        return this.empty();
      }
      return this.setAside(`cannot be examined (${errorText(err)})`, `stat-error:${errorCode(err)}`);
    }
    const signature = `${info.dev}:${info.ino}:${info.size}:${info.mtimeMs}:${info.mode}`;
    if (this.stuck?.signature === signature) return this.empty();
    if (!info.isFile()) return this.setAside("is not a regular file", signature);
    if (info.size > this.maxBytes) return this.setAside(`is larger than ${this.maxBytes} bytes`, signature);
    let text: string;
    try {
      text = await readBounded(this.path, this.maxBytes);
    } catch (err) {
      if (errorCode(err) === "ENOENT") return this.read();
      return this.setAside(`cannot be read (${errorText(err)})`, signature);
    }
    try {
      const value = this.validate(JSON.parse(text));
      this.stuck = undefined;
      return value;
    } catch (err) {
      return this.setAside(`is not valid (${errorText(err)})`, signature);
    }
  }

  /**
   * Replaces the file's content atomically. FAILED_PRECONDITION, naming the file and the system's
   * reason, when it cannot be written (a read-only or full disk, no permission).
   */
  async write(value: T): Promise<void> {
    try {
      await writeFileAtomic(this.path, `${JSON.stringify(value, null, 2)}\n`, this.mode);
    } catch (err) {
      this.log.warn("cannot write state file", { file: this.path, error: errorText(err) });
      throw new ConnectError(
        `cannot write ${this.path} (${errorText(err)}); StarAgent keeps its state there: make ${dirname(this.path)} writable`,
        Code.FailedPrecondition,
      );
    }
  }

  /**
   * Reads, applies `change`, and writes back, one update at a time; returns the new value. Refuses
   * (FAILED_PRECONDITION) while the file is unusable and could not be moved aside: writing would
   * replace it.
   */
  update(change: (current: T) => T): Promise<T> {
    const next = this.queue.then(async () => {
      const value = change(await this.read());
      const stuck = this.stuck;
      if (stuck) {
        throw new ConnectError(
          `${this.path} ${stuck.problem} and could not be moved aside (${stuck.moveError}); StarAgent will not overwrite it: repair or move it`,
          Code.FailedPrecondition,
        );
      }
      await this.write(value);
      return value;
    });
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** Moves the unusable file aside and answers the empty value; remembers it when it cannot be moved. */
  private async setAside(problem: string, signature: string): Promise<T> {
    const aside = `${this.path}.corrupt-${new Date().toISOString().replace(/[:.]/g, "-")}`;
    try {
      await rename(this.path, aside);
    } catch (moveErr) {
      // A concurrent read already moved it aside (and logged it): read what is there now.
      if (errorCode(moveErr) === "ENOENT") return this.read();
      if (this.stuck?.signature !== signature) {
        this.log.warn("unusable state file could not be kept aside; using empty state until it changes", {
          file: this.path,
          problem,
          error: errorText(moveErr),
        });
      }
      this.stuck = { signature, problem, moveError: errorText(moveErr) };
      return this.empty();
    }
    this.stuck = undefined;
    this.log.warn("unreadable state file kept aside and replaced", { file: this.path, keptAs: aside, problem });
    return this.empty();
  }
}

/**
 * Reads at most `limit` bytes of a regular file as UTF-8. Opened non-blocking, so a FIFO swapped in
 * after the stat cannot hang the read; anything but a regular file within the limit is an error.
 */
async function readBounded(path: string, limit: number): Promise<string> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new Error("not a regular file");
    if (info.size > limit) throw new Error(`larger than ${limit} bytes`);
    const buffer = Buffer.alloc(Math.min(info.size, limit) + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length === buffer.length) throw new Error(`grew past ${limit} bytes while being read`);
    }
    return buffer.subarray(0, length).toString("utf8");
  } finally {
    await handle.close();
  }
}

function errorCode(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | undefined)?.code;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
