import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestTmux, type TestTmux } from "../../../test/support/tmux.js";
import { waitFor } from "../../../test/support/wait.js";
import { KeyedLock } from "../../common/keyed-lock.js";
import { createLogger } from "../../common/log.js";
import { AttachmentManager } from "./attachment-manager.js";

let tmux: TestTmux;
let manager: AttachmentManager;
const lock = new KeyedLock(4);

beforeAll(async () => {
  tmux = createTestTmux();
  // `cat` echoes what the pane is typed, so the screen shows exactly when each keystroke arrived.
  await tmux.run("new-session", "-d", "-s", "typed", "-x", "80", "-y", "24", "cat");
  manager = new AttachmentManager({
    tmux: tmux.client,
    log: createLogger("test", "error", () => undefined),
    inputLock: lock,
  });
});

afterAll(async () => {
  await manager?.close();
  await tmux?.close();
});

const screen = () => tmux.run("capture-pane", "-p", "-t", "=typed:");

describe("terminal keystrokes and the session's input lock", () => {
  it("waits while a chat send or an answer holds the lock, then types in order after it", async () => {
    const { attachment } = await manager.attach("typed", "node:test", {
      size: { cols: 80, rows: 24 },
      takeOver: false,
      readOnly: false,
    });
    await attachment.input.submit(1, Buffer.from("before-"));
    await waitFor(async () => (await screen()).includes("before-"), "the free keystroke typed");

    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    // An answer holds the lock while it types its keys (here: a marker typed with send-keys).
    const answer = lock.run("typed", async () => {
      await tmux.run("send-keys", "-t", "=typed:", "-l", "ANSWER");
      await held;
    });
    await waitFor(async () => (await screen()).includes("ANSWER"), "the answer typed");
    const acked = [attachment.input.submit(2, Buffer.from("x")), attachment.input.submit(3, Buffer.from("y"))];
    let ackedYet = false;
    void Promise.all(acked).then(() => {
      ackedYet = true;
    });
    // While the answer holds the lock, the keystrokes are neither typed nor acknowledged. The answer
    // reads the screen itself after typing (it confirms the prompt went away): a tmux round trip each.
    for (let i = 0; i < 5; i++) expect(await screen()).not.toMatch(/ANSWER.*x/);
    expect(ackedYet).toBe(false);
    release();
    await answer;
    expect(await Promise.all(acked)).toEqual([2, 3]);
    await waitFor(async () => (await screen()).includes("before-ANSWERxy"), "the keystrokes typed after the answer");
  });
});
