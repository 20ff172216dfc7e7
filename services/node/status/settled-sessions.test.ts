import { appendFile, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Cli, PromptKind, SessionStatus, StatusReason } from "../../../gen/staragent/v1/session_pb.js";
import { testPane } from "../../../test/support/panes.js";
import { waitFor } from "../../../test/support/wait.js";
import type { SessionObservation } from "./observation.js";
import { reuseStamps, SETTLED_RECHECK_MS, SettledSessions, sameObservation } from "./settled-sessions.js";

function observation(overrides: Partial<SessionObservation> = {}): SessionObservation {
  return {
    cli: Cli.CLAUDE,
    status: SessionStatus.IDLE,
    reason: StatusReason.SEEN_COMPLETION,
    prompt: "",
    promptKind: PromptKind.UNSPECIFIED,
    completionId: "c1",
    detail: "transcript",
    command: "claude",
    chatRevision: "1",
    lastActivity: new Date(1_000),
    ...overrides,
  };
}

describe("SettledSessions", () => {
  let dir: string;
  let settled: SettledSessions;
  let unwatch: (() => void) | undefined;
  let wakes: number;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "sa-settled-"));
    settled = new SettledSessions();
    wakes = 0;
  });
  afterEach(async () => {
    unwatch?.();
    unwatch = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  const record = (paneId: string, stamp: string, at: number, settledRead: boolean, statePaths: string[] = []) =>
    settled.record(
      paneId,
      { stamp, generation: settled.generation(paneId), at, settled: settledRead, statePaths },
      observation(),
    );

  it("reuses nothing while no watch loop subscribes", () => {
    record("%1", "s", 0, true);
    expect(settled.reusable("%1", "s", 1)).toBeUndefined();
  });

  it("reuses a settled observation while its stamp holds, for up to SETTLED_RECHECK_MS", () => {
    unwatch = settled.watch(() => {});
    const kept = record("%1", "s", 0, true);
    expect(settled.reusable("%1", "s", SETTLED_RECHECK_MS - 1)).toBe(kept);
    expect(settled.reusable("%1", "other stamp", 1)).toBeUndefined();
    expect(settled.reusable("%1", "s", SETTLED_RECHECK_MS)).toBeUndefined();
    record("%2", "s", 0, false);
    expect(settled.reusable("%2", "s", 1)).toBeUndefined();
  });

  it("hands back the previous object for an equal observation", () => {
    const first = record("%1", "s", 0, false);
    const second = settled.record(
      "%1",
      { stamp: "s", generation: 0, at: 1, settled: false, statePaths: [] },
      observation({ lastActivity: new Date(1_000) }),
    );
    expect(second).toBe(first);
    const changed = settled.record(
      "%1",
      { stamp: "s", generation: 0, at: 2, settled: false, statePaths: [] },
      observation({ completionId: "c2" }),
    );
    expect(changed).not.toBe(first);
  });

  it("stops reusing and wakes the loop when a watched file is written; forgets panes that left", async () => {
    const file = join(dir, "log.jsonl");
    await writeFile(file, "{}\n");
    unwatch = settled.watch(() => {
      wakes++;
    });
    record("%1", "s", Date.now(), true, [file]);
    await settled.prune(new Set(["%1"]));
    // Arming the watch counts as a change, read at once: writes before it were not seen.
    expect(settled.reusable("%1", "s", Date.now())).toBeUndefined();
    expect(wakes).toBe(1);
    record("%1", "s", Date.now(), true, [file]);
    await settled.prune(new Set(["%1"]));
    expect(settled.reusable("%1", "s", Date.now())).toBeDefined();
    expect(wakes).toBe(1);
    await appendFile(file, "{}\n");
    await waitFor(() => wakes > 1, "a wake for the written file");
    expect(settled.reusable("%1", "s", Date.now())).toBeUndefined();

    record("%1", "s", Date.now(), true, [file]);
    await settled.prune(new Set());
    expect(settled.reusable("%1", "s", Date.now())).toBeUndefined();
    expect(settled.generation("%1")).toBe(0);
  });
});

describe("SettledSessions over a folder several panes watch", () => {
  let dir: string;
  let settled: SettledSessions;
  let unwatch: (() => void) | undefined;
  let wakes = 0;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "sa-settled-folder-"));
    settled = new SettledSessions();
    wakes = 0;
    unwatch = settled.watch(() => {
      wakes++;
    });
  });
  afterEach(async () => {
    unwatch?.();
    await rm(dir, { recursive: true, force: true });
  });

  /** Records each pane settled on `dir`, bound to its log (or to none), until nothing is re-armed. */
  async function settle(logs: Record<string, string | undefined>): Promise<void> {
    for (let round = 0; round < 2; round++) {
      for (const [paneId, log] of Object.entries(logs)) {
        settled.record(
          paneId,
          { stamp: "s", generation: settled.generation(paneId), at: Date.now(), settled: true, statePaths: [dir] },
          observation({ chatLogPath: log ?? "" }),
        );
      }
      await settled.prune(new Set(Object.keys(logs)));
    }
    // The arming's own wake is not the one a test waits for.
    wakes = 0;
  }
  const reused = (paneId: string) => settled.reusable(paneId, "s", Date.now()) !== undefined;

  it("reads again only the pane whose log was written, and the panes with no log yet", async () => {
    const [a, b] = [join(dir, "a.jsonl"), join(dir, "b.jsonl")];
    await writeFile(a, "{}\n");
    await writeFile(b, "{}\n");
    await settle({ "%a": a, "%b": b, "%none": undefined });
    expect([reused("%a"), reused("%b"), reused("%none")]).toEqual([true, true, true]);
    await appendFile(a, "{}\n");
    await waitFor(() => wakes > 0, "a wake for a.jsonl");
    expect([reused("%a"), reused("%b"), reused("%none")]).toEqual([false, true, false]);
  });

  it("reads every pane again for a file that is no pane's log: a new conversation may be any one's", async () => {
    const [a, b] = [join(dir, "a.jsonl"), join(dir, "b.jsonl")];
    await writeFile(a, "{}\n");
    await writeFile(b, "{}\n");
    await settle({ "%a": a, "%b": b });
    await writeFile(join(dir, "c.jsonl"), "{}\n");
    await waitFor(() => wakes > 0, "a wake for c.jsonl");
    expect([reused("%a"), reused("%b")]).toEqual([false, false]);
  });
});

describe("reuseStamps", () => {
  it("changes a pane's stamp when its pane, its seen mark or its folder's panes change", () => {
    const a = testPane({ sessionName: "a", paneId: "%1", paneCurrentPath: "/p" });
    const b = testPane({ sessionName: "b", paneId: "%2", paneCurrentPath: "/q" });
    const base = reuseStamps(
      new Map([
        ["a", a],
        ["b", b],
      ]),
      new Map(),
    ).get("a");
    const again = reuseStamps(
      new Map([
        ["a", { ...a }],
        ["b", b],
      ]),
      new Map(),
    ).get("a");
    expect(again).toBe(base);
    expect(reuseStamps(new Map([["a", { ...a, cursorX: 9 }]]), new Map()).get("a")).not.toBe(base);
    expect(
      reuseStamps(
        new Map([
          ["a", a],
          ["b", b],
        ]),
        new Map([["a", "c1"]]),
      ).get("a"),
    ).not.toBe(base);
    // A second pane opening in a's folder may change which log is a's.
    const sibling = { ...b, paneCurrentPath: "/p" };
    expect(
      reuseStamps(
        new Map([
          ["a", a],
          ["b", sibling],
        ]),
        new Map(),
      ).get("a"),
    ).not.toBe(base);
  });
});

describe("sameObservation", () => {
  it("compares field by field, times by value", () => {
    expect(sameObservation(observation(), observation({ lastActivity: new Date(1_000) }))).toBe(true);
    expect(sameObservation(observation(), observation({ lastActivity: new Date(2_000) }))).toBe(false);
    expect(sameObservation(observation(), observation({ lastActivity: undefined }))).toBe(false);
  });
});
