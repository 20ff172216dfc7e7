import * as pty from "node-pty";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestTmux, type TestTmux } from "../../../test/support/tmux.js";
import { renderFormat } from "../../../test/support/tmux-format.js";
import { waitFor } from "../../../test/support/wait.js";
import { createLogger } from "../../common/log.js";
import { type TmuxArgument, TmuxClient, type TmuxRunOptions } from "../tmux/client.js";
import { AttachmentManager } from "./attachment-manager.js";
import type { PtyAttachment } from "./pty-attachment.js";
import {
  allSessionViewFormats,
  parseAllSessionViews,
  readAllSessionViews,
  readSessionView,
  setIgnoreSize,
} from "./terminal-tmux.js";

/** A tmux client that notes every command it runs (its first word and whether it named a target). */
class CountingTmux extends TmuxClient {
  readonly calls: string[] = [];
  override run(args: readonly TmuxArgument[], options?: TmuxRunOptions): Promise<string> {
    const words = args.filter((a): a is string => typeof a === "string");
    this.calls.push(`${words[0]}${words.includes("-t") ? " -t" : ""}`);
    return super.run(args, options);
  }
}

const SESSIONS = ["one", "two", "three"];
let tmux: TestTmux;
let counting: CountingTmux;
let manager: AttachmentManager;
const ptys: pty.IPty[] = [];

beforeAll(async () => {
  tmux = createTestTmux();
  for (const s of SESSIONS) await tmux.run("new-session", "-d", "-s", s, "-x", "80", "-y", "24", "sleep 600");
  counting = new CountingTmux({ socketName: tmux.socketName });
  manager = new AttachmentManager({ tmux: counting, log: createLogger("test", "error", () => undefined) });
});

afterAll(async () => {
  for (const p of ptys) p.kill();
  await manager?.close();
  await tmux?.close();
});

describe("readAllSessionViews", () => {
  it("reads what readSessionView reads, for every session in one invocation", async () => {
    await tmux.run("set-option", "-t", "two", "status", "off");
    const before = counting.calls.length;
    const views = await readAllSessionViews(counting);
    expect(counting.calls.length - before).toBe(1);
    expect([...views.keys()].sort()).toEqual(["one", "three", "two"]);
    for (const s of SESSIONS) expect(views.get(s)).toEqual(await readSessionView(counting, s));
    expect(views.get("two")?.statusLines).toBe(0);
    await tmux.run("set-option", "-t", "two", "status", "on");
  });

  it("keeps each session's clients and only its current window, whatever the session is called", () => {
    const f = allSessionViewFormats();
    const client = (session_name: string, client_pid: string, client_flags: string) =>
      renderFormat(f.clients.format, { session_name, client_pid, client_tty: `/dev/pts/${client_pid}`, client_flags });
    const window = (session_name: string, window_active: string, cols: string, rows: string, status: string) =>
      renderFormat(f.windows.format, { session_name, window_active, window_width: cols, window_height: rows, status });
    const odd = "a|b\u001fc {x}";
    const out = [
      client(odd, "11", "attached,focused,ignore-size,UTF-8"),
      client(odd, "12", "attached,UTF-8"),
      client("plain", "not-a-pid", ""),
      window(odd, "0", "200", "50", "on"),
      window(odd, "1", "120", "39", "on"),
      window("plain", "1", "80", "24", "off"),
      window("broken", "1", "0", "24", "on"),
    ].join("\n");
    const views = parseAllSessionViews(out, f);
    expect([...views.keys()]).toEqual([odd, "plain"]);
    expect(views.get(odd)).toEqual({
      clients: [
        { pid: 11, tty: "/dev/pts/11", ignoreSize: true },
        { pid: 12, tty: "/dev/pts/12", ignoreSize: false },
      ],
      size: { cols: 120, rows: 40 },
      statusLines: 1,
    });
    expect(views.get("plain")).toEqual({ clients: [], size: { cols: 80, rows: 24 }, statusLines: 0 });
  });
});

describe("setIgnoreSize", () => {
  it("passes over a client that has just gone, and still fails on anything else", async () => {
    // An attachment ending while another starts: its tty is gone when the new one sets the flags.
    await expect(setIgnoreSize(counting, "/dev/pts/999999", true)).resolves.toBeUndefined();
    const nowhere = new TmuxClient({ socketName: tmux.socketName, tmuxPath: "/nonexistent/tmux" });
    await expect(setIgnoreSize(nowhere, "/dev/pts/1", true)).rejects.toThrow(/cannot run/);
  });
});

describe("the machine's size poll", () => {
  it("follows an outside client on any viewed session with one tmux invocation a round, and stops with the last viewer", async () => {
    const input = { size: { cols: 100, rows: 30 }, takeOver: false, readOnly: false };
    const attached: PtyAttachment[] = [];
    for (const s of SESSIONS) attached.push((await manager.attach(s, "viewer", input)).attachment);
    expect(attached.map((a) => a.ignoreSize)).toEqual([false, false, false]);
    // Once the attaches are done, the only tmux commands are the poll's.
    const quietFrom = counting.calls.length;
    // The user's own terminal attaches to "two" outside StarAgent.
    const own = pty.spawn("tmux", counting.argv(["attach-session", "-t", "=two"]), {
      cols: 70,
      rows: 20,
      env: { ...counting.environment, TERM: "xterm-256color" },
    });
    ptys.push(own);
    await waitFor(() => attached[1]?.ignoreSize === true, "the viewer of two to stop driving its size", 10_000);
    // Two more rounds after the viewer stopped driving (each one list-clients).
    const roundsFrom = counting.calls.length;
    await waitFor(
      () => counting.calls.slice(roundsFrom).filter((c) => c === "list-clients").length >= 2,
      "two more rounds of the size poll",
      10_000,
    );
    const polls = counting.calls.slice(quietFrom);
    // One read of all sessions a round; besides, only the viewer's tmux client got its flag (through
    // its tty). No session was read on its own.
    expect(polls.filter((c) => c === "list-clients").length).toBeGreaterThanOrEqual(2);
    expect(polls.filter((c) => c !== "list-clients" && c !== "refresh-client -t")).toEqual([]);
    expect(attached.map((a) => a.ignoreSize)).toEqual([false, true, false]);
    for (const a of attached) await a.close("test over");
    await waitFor(() => manager.count === 0, "the attachments to end");
    own.kill();
    // With the last viewer gone the poll stops by itself: no round is due, so tmux hears no more from it.
    await waitFor(() => !manager.sizePolling, "the size poll to stop", 10_000);
  });
});
