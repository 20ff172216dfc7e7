import { join } from "node:path";
import { fromJson, type JsonValue, toJson } from "@bufbuild/protobuf";
import { type Delivery, DeliverySchema } from "../../../gen/staragent/v1/notification_service_pb.js";
import { JsonFile } from "../../common/json-file.js";
import type { Logger } from "../../common/log.js";

/** Deliveries kept per target (every attempt is one): a chatty target never pushes out the others'. */
export const DELIVERIES_PER_TARGET = 100;
/** Deliveries kept in all, whatever the number of targets (removed ones' entries included). */
export const MAX_DELIVERIES = 2_000;
/** The delivery log's file under `$STARAGENT_HOME`. */
export const DELIVERIES_FILE = "deliveries.json";

/**
 * Checks `deliveries.json`: an array of Delivery messages in their proto JSON form, newest first. A
 * file that is not one is set aside by JsonFile (never deleted) and the log starts empty.
 */
function checkDeliveries(value: unknown): JsonValue[] {
  if (!Array.isArray(value)) throw new Error(`${DELIVERIES_FILE}: not an array of deliveries`);
  value.forEach((entry, i) => {
    try {
      deliveryOf(entry);
    } catch (err) {
      throw new Error(`${DELIVERIES_FILE} at ${i}: ${err instanceof Error ? err.message : String(err)}`);
    }
  });
  return value as JsonValue[];
}

function deliveryOf(entry: unknown): Delivery {
  return fromJson(DeliverySchema, entry as JsonValue, { ignoreUnknownFields: true });
}

/**
 * The delivery log (ListDeliveries), kept in memory and in `$STARAGENT_HOME/deliveries.json` (mode
 * 0600, written whole to a temporary file and renamed, so a crash never leaves half of it), read back
 * at start: what was delivered, retried or failed before a restart is still there to see. Bounded to
 * the newest DELIVERIES_PER_TARGET of each target and MAX_DELIVERIES in all. Writes are coalesced: a
 * burst of attempts costs one write after the one under way, never one each.
 */
export class DeliveryLog {
  private entries: Delivery[] = [];
  private readonly file: JsonFile<JsonValue[]>;
  private writing: Promise<void> | undefined;
  private dirty = false;

  constructor(
    home: string,
    private readonly log: Logger,
    private readonly perTarget = DELIVERIES_PER_TARGET,
    private readonly max = MAX_DELIVERIES,
  ) {
    this.file = new JsonFile(
      join(home, DELIVERIES_FILE),
      checkDeliveries,
      () => [],
      log,
      0o600,
      // A few hundred bytes per entry: far above what the bounds allow, far below a memory worry.
      8 * 1024 * 1024,
    );
  }

  /** Reads what the file holds (bounded again, in case the bounds shrank). */
  async load(): Promise<void> {
    const stored = (await this.file.read()).map(deliveryOf);
    this.entries = this.bounded([...stored, ...this.entries]);
  }

  /** Adds one attempt as the newest and schedules the file's write. */
  add(delivery: Delivery): void {
    this.entries = this.bounded([delivery, ...this.entries]);
    this.schedule();
  }

  /** The log, newest first, of one target or all, at most `limit`. */
  list(target: string, limit: number): Delivery[] {
    return this.entries.filter((d) => target === "" || d.target === target).slice(0, limit);
  }

  /** Waits until what was added is in the file. */
  async flush(): Promise<void> {
    while (this.writing) await this.writing;
  }

  private bounded(all: Delivery[]): Delivery[] {
    const counts = new Map<string, number>();
    const kept: Delivery[] = [];
    for (const d of all) {
      const n = counts.get(d.target) ?? 0;
      if (n >= this.perTarget) continue;
      counts.set(d.target, n + 1);
      kept.push(d);
      if (kept.length >= this.max) break;
    }
    return kept;
  }

  private schedule(): void {
    this.dirty = true;
    if (this.writing) return;
    this.writing = (async () => {
      while (this.dirty) {
        this.dirty = false;
        const json = this.entries.map((d) => toJson(DeliverySchema, d));
        // update, not write: a file that is unusable and could not be set aside is never replaced.
        await this.file
          .update(() => json)
          .catch((err: unknown) => {
            this.log.warn("cannot record the delivery log", {
              error: err instanceof Error ? err.message : String(err),
            });
          });
      }
    })().finally(() => {
      this.writing = undefined;
    });
  }
}
