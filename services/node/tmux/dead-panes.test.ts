import { describe, expect, it } from "vitest";
import { DeadPanes } from "./dead-panes.js";
import type { PaneInfo } from "./panes.js";

function deadPane(paneId: string, fields: Partial<PaneInfo> = {}): PaneInfo {
  return { paneId, paneDead: true, deadStatus: undefined, deadTime: undefined, ...fields } as PaneInfo;
}

describe("DeadPanes", () => {
  it("takes tmux's time of death when tmux has the status, and nudges nothing", async () => {
    const nudged: string[] = [];
    const panes = new DeadPanes(
      async (id) => void nudged.push(id),
      () => 5_000_000,
    );
    expect(await panes.diedAt(deadPane("%1", { deadStatus: 7, deadTime: 4_000 }))).toBe(4_000);
    expect(nudged).toEqual([]);
  });

  it("nudges tmux about a pane dead without a status once a second, five times at most, dated when first seen", async () => {
    let now = 1_000_000;
    const nudged: number[] = [];
    const panes = new DeadPanes(
      async () => void nudged.push(now),
      () => now,
    );
    const pane = deadPane("%2");
    expect(await panes.diedAt(pane)).toBe(1_000);
    for (let i = 0; i < 40; i++) {
      now += 250;
      expect(await panes.diedAt(pane)).toBe(1_000);
    }
    expect(nudged).toEqual([1_000_000, 1_001_000, 1_002_000, 1_003_000, 1_004_000]);
  });

  it("takes tmux's time once it has one, and the status ends the nudging", async () => {
    let now = 2_000_000;
    let nudges = 0;
    const panes = new DeadPanes(
      async () => void nudges++,
      () => now,
    );
    expect(await panes.diedAt(deadPane("%3"))).toBe(2_000);
    now += 1_500;
    expect(await panes.diedAt(deadPane("%3", { deadTime: 1_999 }))).toBe(1_999);
    expect(nudges).toBe(2);
    now += 1_500;
    expect(await panes.diedAt(deadPane("%3", { deadTime: 1_999, deadStatus: 0 }))).toBe(1_999);
    expect(nudges).toBe(2);
  });

  it("a failed nudge is not the read's failure; a pane gone and dead again is seen anew", async () => {
    let now = 3_000_000;
    const panes = new DeadPanes(
      async () => {
        throw new Error("no server");
      },
      () => now,
    );
    expect(await panes.diedAt(deadPane("%4"))).toBe(3_000);
    panes.retain(new Set());
    now += 10_000;
    expect(await panes.diedAt(deadPane("%4"))).toBe(3_010);
  });
});
