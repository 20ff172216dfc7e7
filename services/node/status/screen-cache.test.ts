import { afterEach, describe, expect, it } from "vitest";
import { createTestTmux, type TestTmux } from "../../../test/support/tmux.js";
import { waitFor } from "../../../test/support/wait.js";
import { activePanes, listPanes, type PaneInfo } from "../tmux/panes.js";
import { ScreenCache } from "./screen-cache.js";

describe("ScreenCache over a private tmux server", () => {
  let tmux: TestTmux | undefined;
  afterEach(async () => {
    await tmux?.close();
    tmux = undefined;
  });

  async function pane(t: TestTmux): Promise<PaneInfo> {
    const found = activePanes(await listPanes(t.client)).get("s");
    if (!found) throw new Error("no pane for session s");
    return found;
  }

  it("reuses a read while the pane shows nothing new and reads again when asked fresh or it changed", async () => {
    const t = createTestTmux();
    tmux = t;
    await t.run("new-session", "-d", "-s", "s", "-x", "80", "-y", "24", "cat");
    const cache = new ScreenCache(t.client);
    const before = await pane(t);
    expect(await cache.read(before, 60_000)).toBe("");
    await t.run("send-keys", "-t", "=s:", "-l", "first line");
    await waitFor(async () => (await cache.read(before, 0)).includes("first line"), "the typed line read fresh");
    await t.run("send-keys", "-t", "=s:", "-l", " more");
    // Seen by tmux (read past the cache), so only the cache can still answer the older screen.
    await waitFor(async () => (await t.run("capture-pane", "-p", "-t", "=s:")).includes("first line more"), "the echo");
    // The same pane state within the age: the kept read, without tmux.
    expect(await cache.read(before, 60_000)).toBe("first line");
    // A pane that shows something new (its title here) is read again whatever the age.
    await t.run("select-pane", "-t", "=s:", "-T", "retitled");
    const after = await waitFor(async () => {
      const p = await pane(t);
      return p.paneTitle === "retitled" && p;
    }, "the new title");
    expect(await cache.read(after, 60_000)).toBe("first line more");
    cache.prune(new Set());
    expect(await cache.read(after, 60_000)).toBe("first line more");
  });

  it("answers an empty screen for a pane tmux no longer has", async () => {
    const t = createTestTmux();
    tmux = t;
    await t.run("new-session", "-d", "-s", "s", "cat");
    const gone = { ...(await pane(t)), paneId: "%999" };
    expect(await new ScreenCache(t.client).read(gone, 0)).toBe("");
  });
});
