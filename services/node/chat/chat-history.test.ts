import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ChatMessage, ChatMessageSource, ChatRole, Cli } from "../../../gen/staragent/v1/session_pb.js";
import type { GetChatResponse } from "../../../gen/staragent/v1/session_service_pb.js";
import { failureOf, type HubFixture, startHubFixture } from "../../../test/foundation/hub-fixture.js";
import { REPO_ROOT, runCli } from "../../../test/support/servers.js";
import { waitFor } from "../../../test/support/wait.js";

/** The stand-in CLIs (test/stand-ins) come first on the sessions' PATH. */
const STAND_INS = join(REPO_ROOT, "test/stand-ins");
/** Turns the Claude Code session runs before its history is paged: more than one small page holds. */
const TURNS = 6;
/** A page size that splits those turns over several pages. */
const SMALL_PAGE = 3;

const name = (session: string) => `nodes/local/sessions/${session}`;
const texts = (messages: readonly ChatMessage[], role: ChatRole) =>
  messages.filter((m) => m.role === role).map((m) => m.text);

describe("chat history read from the native logs, through a real Hub process", () => {
  let f: HubFixture;
  const screen = (session: string) => f.tmux.run("capture-pane", "-p", "-t", `=${session}:`);
  const chat = (session: string, more: { cursor?: string; before?: string; pageSize?: number } = {}) =>
    f.sessions.getChat({ name: name(session), ...more });
  /** Sends a prompt and waits until the chat holds the stand-in's answer to it. */
  const turn = async (session: string, prompt: string) => {
    const sent = await f.sessions.sendChatMessage({ name: name(session), text: prompt });
    expect(sent.confirmed).toBe(true);
    await waitFor(
      async () => texts((await chat(session)).messages, ChatRole.ASSISTANT).includes(`Done: ${prompt}`),
      `the answer to ${prompt} in ${session}'s chat`,
    );
  };
  /** Every message of a chat: the newest page, then older pages through `before`, oldest first. */
  const wholeChat = async (session: string, pageSize: number) => {
    const newest = await chat(session, { pageSize });
    const pages: ChatMessage[][] = [newest.messages];
    let token = newest.hasMore ? newest.olderPageToken : "";
    for (let read = 0; token !== "" && read < 100; read++) {
      const page = await chat(session, { pageSize, before: token });
      expect(page).toMatchObject({ reset: false, nextCursor: "" });
      pages.unshift(page.messages);
      token = page.hasMore ? page.olderPageToken : "";
    }
    return { newest, messages: pages.flat() };
  };

  beforeAll(async () => {
    f = await startHubFixture();
    const home = join(f.dir, "home");
    const shared = join(f.dir, "shared");
    await mkdir(home);
    await mkdir(shared);
    const start = (session: string, cwd: string, command: string) =>
      f.tmux.run("new-session", "-d", "-s", session, "-x", "80", "-y", "24", "-c", cwd, "-e", `HOME=${home}`, command);
    await start("hc", f.dir, `env PATH=${STAND_INS}:${process.env.PATH ?? ""} claude`);
    await start("hx1", shared, `env PATH=${STAND_INS}:${process.env.PATH ?? ""} codex`);
    await start("hx2", shared, `env PATH=${STAND_INS}:${process.env.PATH ?? ""} codex`);
    await start("hsh", f.dir, "bash --noprofile --norc");
    await waitFor(async () => (await screen("hc")).includes("? for shortcuts"), "the claude stand-in's input box");
    for (const s of ["hx1", "hx2"]) {
      await waitFor(async () => (await screen(s)).includes("Ask Codex to do anything"), `the ${s} codex stand-in`);
    }
  });

  afterAll(async () => {
    await f?.tmux.close();
    await f?.close();
  });

  it("reads a Claude Code session off the screen until its transcript exists, and says so", async () => {
    const res = await chat("hc");
    expect(res.sourceDetail).toMatch(/^screen only: /);
    expect(res).toMatchObject({ hasMore: false, olderPageToken: "" });
  });

  it("pages back through the whole transcript: every prompt and answer once, in order, under stable ids", async () => {
    const prompts = Array.from({ length: TURNS }, (_, i) => `history turn ${i + 1}`);
    for (const prompt of prompts) await turn("hc", prompt);
    const { newest, messages } = await wholeChat("hc", SMALL_PAGE);
    expect(newest.messages.length).toBeLessThan(messages.length);
    expect(newest).toMatchObject({ reset: true, hasMore: true, cli: Cli.CLAUDE });
    expect(newest.sourceDetail).toMatch(/^claude transcript .+\.jsonl \(sessions\/\d+\.json names it\)/);
    expect(texts(messages, ChatRole.USER)).toEqual(prompts);
    expect(texts(messages, ChatRole.ASSISTANT)).toEqual(prompts.map((p) => `Done: ${p}`));
    expect(messages.every((m) => m.source === ChatMessageSource.LOG && m.createTime !== undefined)).toBe(true);
    const ids = messages.map((m) => BigInt(m.id));
    expect(ids.every((id, i) => i === 0 || id > (ids[i - 1] ?? 0n))).toBe(true);
    // The same messages under the same ids in one big page.
    const whole = await chat("hc", { pageSize: 500 });
    expect(whole.hasMore).toBe(false);
    expect(whole.messages.map((m) => [m.id, m.text])).toEqual(messages.map((m) => [m.id, m.text]));
  });

  it("a cursor returns only what is new, and the newest page stays put", async () => {
    const first = await chat("hc");
    await turn("hc", "history turn after the cursor");
    const next: GetChatResponse = await waitFor(async () => {
      const res = await chat("hc", { cursor: first.nextCursor });
      return texts(res.messages, ChatRole.ASSISTANT).includes("Done: history turn after the cursor") && res;
    }, "the new turn through the cursor");
    expect(next.reset).toBe(false);
    expect(texts(next.messages, ChatRole.USER)).toEqual(["history turn after the cursor"]);
    const known = new Set(first.messages.map((m) => m.id));
    expect(next.messages.filter((m) => known.has(m.id))).toEqual([]);
    expect(await chat("hc", { cursor: next.nextCursor })).toMatchObject({ reset: false, messages: [] });
  });

  it("two Codex instances in one folder: each chat holds only its own turns", async () => {
    for (let i = 1; i <= 2; i++) {
      await turn("hx1", `first instance prompt ${i}`);
      await turn("hx2", `second instance prompt ${i}`);
    }
    for (const [session, own, other] of [
      ["hx1", "first", "second"],
      ["hx2", "second", "first"],
    ] as const) {
      const { newest, messages } = await wholeChat(session, SMALL_PAGE);
      expect(newest.sourceDetail).toMatch(
        /^codex rollout rollout-.+\.jsonl \(its newest prompt is on this pane's screen\)/,
      );
      expect(texts(messages, ChatRole.USER)).toEqual([`${own} instance prompt 1`, `${own} instance prompt 2`]);
      expect(messages.some((m) => m.text.includes(other))).toBe(false);
    }
  });

  it("refuses bad paging input with INVALID_ARGUMENT, and tokens of another log with FAILED_PRECONDITION", async () => {
    const otherLog = (await chat("hx1", { pageSize: 1 })).olderPageToken;
    expect(otherLog).not.toBe("");
    const cases: Array<[() => Promise<unknown>, string, RegExp]> = [
      [() => chat("hc", { pageSize: 501 }), "InvalidArgument", /^page_size: 501 is out of range; use 1 to 500/],
      [() => chat("hc", { pageSize: -1 }), "InvalidArgument", /^page_size: -1 is out of range/],
      [() => chat("hc", { before: "bogus!" }), "InvalidArgument", /^before: not a page token returned by GetChat/],
      [() => chat("hc", { cursor: "x", before: otherLog }), "InvalidArgument", /^before: pass either cursor/],
      [() => chat("hx2", { before: otherLog }), "FailedPrecondition", /^before: hx2 writes another log than/],
      [() => chat("hsh", { before: otherLog }), "FailedPrecondition", /^before: hsh has no native log to read older/],
    ];
    for (const [call, code, message] of cases) {
      const failure = await failureOf(call());
      expect(failure.code).toBe(code);
      expect(failure.message).toMatch(message);
    }
  });

  it("`staragent chat` prints the newest page, more pages with --pages, the whole history with --all", async () => {
    const newest = await runCli(["chat", "hc", "--page-size", "2"], f.cliEnv);
    expect(newest.code).toBe(0);
    expect(newest.stdout).toBe(
      "[user]\n  history turn after the cursor\n[assistant]\n  Done: history turn after the cursor\n",
    );
    expect(newest.stderr).toContain("(older messages not shown: --pages N or --all)");
    const two = await runCli(["chat", "hc", "--page-size", "2", "--pages", "2"], f.cliEnv);
    expect(two.stdout.match(/^\[user\]$/gm)).toHaveLength(2);
    const all = await runCli(["chat", "hc", "--page-size", "2", "--all"], f.cliEnv);
    expect(all.stdout.match(/^ {2}history turn .+$/gm)).toEqual([
      ...Array.from({ length: TURNS }, (_, i) => `  history turn ${i + 1}`),
      "  history turn after the cursor",
    ]);
    expect(all.stderr).not.toContain("older messages not shown");
    const bad = await runCli(["chat", "hc", "--pages", "0"], f.cliEnv);
    expect(bad).toMatchObject({ code: 2 });
    expect(bad.stderr).toContain("--pages 0: not a number of pages");
  });
});
