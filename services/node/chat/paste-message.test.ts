import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createTestTmux, type TestTmux } from "../../../test/support/tmux.js";
import { waitFor } from "../../../test/support/wait.js";
import { TmuxClient } from "../tmux/client.js";
import { pasteMessage } from "./paste-message.js";

/** A quiet long enough to tell from the paste's own echo wait on any machine. */
const QUIET_MS = 400;

/** A pane program that writes each chunk it reads, with the time it came, as a JSON line. */
const RECORDER = `
process.stdin.setRawMode(true);
process.stdout.write("\\x1b[?2004h> ");
process.stdin.on("data", (d) => {
  require("node:fs").appendFileSync(process.env.KEYS, JSON.stringify({ at: Date.now(), text: d.toString("utf8") }) + "\\n");
  process.stdout.write(d.toString("utf8").replace(/\\x1b\\[20[01]~/g, ""));
});
`;

describe("pasteMessage", () => {
  let tmux: TestTmux | undefined;
  let dir: string | undefined;

  afterEach(async () => {
    await tmux?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
    tmux = undefined;
    dir = undefined;
  });

  it("presses Enter no sooner than the module's submitQuietMs after the paste", async () => {
    dir = await mkdtemp(join(tmpdir(), "sa-paste-"));
    const keys = join(dir, "keys.jsonl");
    const t = createTestTmux({ ...process.env, KEYS: keys });
    tmux = t;
    await t.run("new-session", "-d", "-s", "p", "-x", "80", "-y", "24", "node", "-e", RECORDER);
    await waitFor(async () => (await t.run("capture-pane", "-p", "-t", "=p:")).includes(">"), "the recorder");
    const paneId = (await t.run("display", "-p", "-t", "=p:", "#{pane_id}")).trim();
    await pasteMessage(new TmuxClient({ socketName: t.socketName }), paneId, "hello there", QUIET_MS);
    const chunks = await waitFor(async () => {
      const lines = (await readFile(keys, "utf8").catch(() => "")).split("\n").filter((l) => l !== "");
      const parsed = lines.map((l) => JSON.parse(l) as { at: number; text: string });
      return parsed.some((c) => c.text.includes("\r")) ? parsed : undefined;
    }, "the Enter in the pane");
    const paste = chunks.find((c) => c.text.includes("hello there"));
    const enter = chunks.find((c) => c.text.includes("\r"));
    if (!paste || !enter) throw new Error(`no paste or Enter in ${JSON.stringify(chunks)}`);
    expect(enter.at - paste.at).toBeGreaterThanOrEqual(QUIET_MS - 50);
  });
});
