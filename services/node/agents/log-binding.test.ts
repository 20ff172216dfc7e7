import { describe, expect, it } from "vitest";
import { type BindingRequest, LogBinder, type LogCandidate } from "./log-binding.js";

/** A request whose screen read is counted; `screen` is what the pane shows. */
function request(
  process: string,
  siblings: string[],
  candidates: LogCandidate[],
  screen: string,
  reads: { count: number } = { count: 0 },
): BindingRequest {
  return {
    process,
    siblings,
    candidates,
    screen: async () => {
      reads.count++;
      return screen;
    },
  };
}

const log = (key: string, newestPrompt: string, updatedMs: number): LogCandidate => ({ key, newestPrompt, updatedMs });

describe("LogBinder", () => {
  it("binds a log the CLI names itself, whatever the folder holds", async () => {
    const binder = new LogBinder();
    const bound = await binder.bind({
      ...request("p1", ["p2"], [log("other", "hi there", 5)], ""),
      explicit: { key: "mine", how: "named" },
    });
    expect(bound).toEqual({ key: "mine", how: "named", screenRead: false });
  });

  it("gives the only instance in a folder the folder's newest log, without reading its screen", async () => {
    const binder = new LogBinder();
    const reads = { count: 0 };
    const bound = await binder.bind(request("p1", [], [log("old", "a", 1), log("new", "b", 2)], "", reads));
    expect(bound.key).toBe("new");
    expect(reads.count).toBe(0);
  });

  it("binds instances sharing a folder by the prompt each pane shows, never to each other's log", async () => {
    const binder = new LogBinder();
    const logs = [log("a.jsonl", "fix the login form", 10), log("b.jsonl", "write the release notes", 11)];
    const a = await binder.bind(request("p1", ["p2"], logs, "› fix the login form\n• Working (2s)"));
    const b = await binder.bind(request("p2", ["p1"], logs, "› write the release notes"));
    expect(a.key).toBe("a.jsonl");
    expect(b.key).toBe("b.jsonl");
    expect(a.how).toContain("on this pane's screen");
  });

  it("leaves an instance whose pane shows none of the free logs' prompts unbound (screen only)", async () => {
    const binder = new LogBinder();
    const logs = [log("a.jsonl", "fix the login form", 10)];
    await binder.bind(request("p1", ["p2"], logs, "› fix the login form"));
    const idle = await binder.bind(request("p2", ["p1"], logs, "› Ask Codex to do anything"));
    expect(idle.key).toBeUndefined();
    expect(idle.how).toContain("2 instances share this folder");
  });

  it("does not look for a prompt again on a pane that did not show it until that log is written to", async () => {
    const binder = new LogBinder();
    const reads = { count: 0 };
    const logs = [log("a.jsonl", "fix the login form", 10)];
    await binder.bind(request("p2", ["p1"], logs, "nothing here", reads));
    await binder.bind(request("p2", ["p1"], logs, "nothing here", reads));
    expect(reads.count).toBe(1);
    await binder.bind(request("p2", ["p1"], [log("a.jsonl", "fix the login form", 12)], "nothing here", reads));
    expect(reads.count).toBe(2);
  });

  it("cannot tell two panes apart that show the same prompt, and says so", async () => {
    const binder = new LogBinder();
    const logs = [log("a.jsonl", "hello there", 10), log("b.jsonl", "hello there", 11)];
    const bound = await binder.bind(request("p1", ["p2"], logs, "❯ hello there"));
    expect(bound.key).toBeUndefined();
  });

  it("keeps a binding until a newer log shows its prompt on the pane (a new conversation)", async () => {
    const binder = new LogBinder();
    const first = [log("a.jsonl", "fix the login form", 10)];
    await binder.bind(request("p1", ["p2"], first, "› fix the login form"));
    const kept = await binder.bind(request("p1", ["p2"], [log("a.jsonl", "fix the login form", 20)], "scrolled away"));
    expect(kept.key).toBe("a.jsonl");
    const cleared = await binder.bind(
      request("p1", ["p2"], [log("a.jsonl", "fix the login form", 20), log("c.jsonl", "/clear", 30)], "❯ /clear"),
    );
    expect(cleared.key).toBe("c.jsonl");
  });

  it("never gives the remaining instance the log of one that exited by recency", async () => {
    const binder = new LogBinder();
    const logs = [log("a.jsonl", "fix the login form", 10), log("b.jsonl", "write the release notes", 11)];
    await binder.bind(request("p1", ["p2"], logs, "› fix the login form"));
    await binder.bind(request("p2", ["p1"], logs, "› write the release notes"));
    // p1 exits after one more turn: its log is now the folder's newest.
    const alone = await binder.bind(
      request("p2", [], [log("a.jsonl", "fix the login form", 20), log("b.jsonl", "write the release notes", 11)], ""),
    );
    expect(alone.key).toBe("b.jsonl");
  });
});
