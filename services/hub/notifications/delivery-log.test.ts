import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DeliveryOutcome, DeliverySchema } from "../../../gen/staragent/v1/notification_service_pb.js";
import { createLogger } from "../../common/log.js";
import { DELIVERIES_FILE, DeliveryLog } from "./delivery-log.js";

function delivery(target: string, attempt: number) {
  return create(DeliverySchema, {
    target,
    session: "nodes/w1/sessions/fix-bug",
    summary: "wants to run `npm test`",
    outcome: DeliveryOutcome.RETRYING,
    httpStatus: 500,
    error: "500 Internal Server Error",
    attempt,
    time: timestampFromMs(1_700_000_000_000 + attempt),
  });
}

describe("DeliveryLog", () => {
  let home: string;
  const log = createLogger("test", "error");

  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), "sa-deliveries-"));
  });

  afterEach(async () => {
    await rm(home, { recursive: true, force: true });
  });

  it("keeps the newest few per target, in a 0600 file read back by the next start", async () => {
    const first = new DeliveryLog(home, log, 3, 100);
    await first.load();
    for (let i = 1; i <= 5; i++) first.add(delivery("webhooks/chatty", i));
    first.add(delivery("webhooks/quiet", 1));
    await first.flush();
    // The bound per target did it: the chatty target's oldest two went, the quiet one's stayed.
    const kept = first.list("", 10).map((d) => `${d.target}#${d.attempt}`);
    expect(kept).toEqual(["webhooks/quiet#1", "webhooks/chatty#5", "webhooks/chatty#4", "webhooks/chatty#3"]);
    expect((await stat(join(home, DELIVERIES_FILE))).mode & 0o777).toBe(0o600);

    const next = new DeliveryLog(home, log, 3, 100);
    await next.load();
    expect(next.list("", 10)).toEqual(first.list("", 10));
    expect(next.list("webhooks/quiet", 10).map((d) => d.attempt)).toEqual([1]);
  });

  it("bounds the whole log too, whatever the number of targets", async () => {
    const all = new DeliveryLog(home, log, 10, 4);
    await all.load();
    for (let i = 1; i <= 6; i++) all.add(delivery(`webhooks/t${i}`, i));
    await all.flush();
    expect(all.list("", 10).map((d) => d.target)).toEqual(["webhooks/t6", "webhooks/t5", "webhooks/t4", "webhooks/t3"]);
    const stored = JSON.parse(await readFile(join(home, DELIVERIES_FILE), "utf8")) as unknown[];
    expect(stored).toHaveLength(4);
  });

  it("sets a file that is not a delivery log aside, never deleting it, and starts empty", async () => {
    await writeFile(join(home, DELIVERIES_FILE), '[{"attempt": "many"}]\n', { mode: 0o600 });
    const fresh = new DeliveryLog(home, log);
    await fresh.load();
    expect(fresh.list("", 10)).toEqual([]);
    const aside = (await readdir(home)).filter((n) => n.startsWith(`${DELIVERIES_FILE}.corrupt-`));
    expect(aside).toHaveLength(1);
    expect(await readFile(join(home, aside[0] ?? ""), "utf8")).toBe('[{"attempt": "many"}]\n');
  });
});
