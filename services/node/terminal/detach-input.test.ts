import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createTestTmux, type TestTmux } from "../../../test/support/tmux.js";
import { waitFor } from "../../../test/support/wait.js";
import { createLogger } from "../../common/log.js";
import { AttachmentManager } from "./attachment-manager.js";

let tmux: TestTmux;
let manager: AttachmentManager;
let serverPid = 0;

beforeAll(async () => {
  tmux = createTestTmux();
  // `cat` echoes what the pane is typed, so the screen shows which keystrokes arrived.
  await tmux.run("new-session", "-d", "-s", "typed", "-x", "80", "-y", "24", "cat");
  serverPid = Number((await tmux.run("display-message", "-p", "#{pid}")).trim());
  manager = new AttachmentManager({ tmux: tmux.client, log: createLogger("test", "error", () => undefined) });
});

afterEach(() => {
  // A failed step must not leave the test's tmux server stopped.
  process.kill(serverPid, "SIGCONT");
});

afterAll(async () => {
  await manager?.close();
  await tmux?.close();
});

const screen = () => tmux.run("capture-pane", "-p", "-t", "=typed:");
const clients = async () => (await tmux.run("list-clients", "-F", "#{client_pid}")).split("\n").filter(Boolean);

async function attached() {
  const { attachment } = await manager.attach("typed", "node:test", {
    size: { cols: 80, rows: 24 },
    takeOver: false,
    readOnly: false,
  });
  await waitFor(async () => (await clients()).includes(String(attachment.pid)), "the tmux client attached");
  return attachment;
}

describe("keystrokes acknowledged just before the viewer detaches", () => {
  it("reach the pane although tmux had not read them when the detach began", async () => {
    const attachment = await attached();
    // While the tmux server is stopped, acknowledged keys wait in the client's terminal, unread: what a
    // busy machine does to keys typed a moment before the viewer switches to another session.
    process.kill(serverPid, "SIGSTOP");
    await attachment.input.submit(1, Buffer.from("typed-before-detach"));
    const closing = attachment.close("detached");
    await sleep(300);
    process.kill(serverPid, "SIGCONT");
    await closing;
    await waitFor(async () => (await screen()).includes("typed-before-detach"), "the acknowledged keys in the pane");
    expect(await clients()).toEqual([]);
  });

  it("keeps a closing Escape that tmux waits on to tell it from the start of a key sequence", async () => {
    await tmux.run("set-option", "-s", "escape-time", "300");
    await tmux.run("bind-key", "-n", "Escape", "set-option", "-s", "@escape-received", "yes");
    try {
      const attachment = await attached();
      await attachment.input.submit(1, Buffer.from("\u001b"));
      await attachment.close("detached");
      // tmux takes the lone Escape as a key only once escape-time has passed; a detach before then
      // would drop it. Here its binding records that it arrived.
      expect((await tmux.run("show-options", "-sv", "@escape-received")).trim()).toBe("yes");
    } finally {
      await tmux.run("unbind-key", "-n", "Escape");
    }
  });
});
