import { afterEach, describe, expect, it } from "vitest";
import { createTestTmux, type TestTmux } from "../../../test/support/tmux.js";
import { waitFor } from "../../../test/support/wait.js";
import { TmuxServerProbe } from "./server-probe.js";

describe("TmuxServerProbe on a private tmux server", () => {
  let tmux: TestTmux | undefined;

  afterEach(async () => {
    await tmux?.close();
    tmux = undefined;
  });

  it("notices a session started and one killed behind its back, and nothing in between", async () => {
    const t = createTestTmux();
    tmux = t;
    await t.run("new-session", "-d", "-s", "first", "sleep 600");
    const probe = new TmuxServerProbe(t.client);
    await probe.mark(true);
    expect(await probe.changed()).toBe(false);

    await t.run("new-session", "-d", "-s", "second", "sleep 600");
    expect(await probe.changed()).toBe(true);

    await probe.mark(true);
    expect(await probe.changed()).toBe(false);
    await t.run("kill-session", "-t", "=second");
    await waitFor(() => probe.changed(), "the killed session's program to end");
  });

  it("reports no change, and spawns nothing, when told no server runs", async () => {
    const t = createTestTmux();
    tmux = t;
    const probe = new TmuxServerProbe(t.client);
    await probe.mark(false);
    await t.run("new-session", "-d", "-s", "later", "sleep 600");
    expect(await probe.changed()).toBe(false);
  });
});
