import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Connectivity } from "../../gen/staragent/v1/node_service_pb.js";
import {
  type PendingPrompt,
  PromptEffect,
  PromptKind,
  type Session,
  StatusReason,
} from "../../gen/staragent/v1/session_pb.js";
import type { SessionService } from "../../gen/staragent/v1/session_service_pb.js";
import { ANSWER_CONFIRM_TIMEOUT_MS } from "../../services/node/prompts/machine-prompts.js";
import { runCli, type ServerProcess, startServerProcess } from "../support/servers.js";
import { standInEnv } from "../support/stand-in-env.js";
import { createTestTmux, type TestTmux } from "../support/tmux.js";
import { waitFor } from "../support/wait.js";
import { failureOf, type HubFixture, startHubFixture, testToken } from "./hub-fixture.js";

/**
 * AnswerPrompt end to end: a Hub process and a remote Node process, each on its own tmux server, the
 * stand-in CLIs drawing their prompts in real panes; answers go through the Hub to the Hub's own
 * machine and to the Node. Every stand-in logs the bytes its pane typed into it (STANDIN_KEYLOG).
 */
describe("answering prompts through the Hub, locally and on a remote Node", () => {
  const nodeToken = testToken();
  let dir: string;
  let f: HubFixture | undefined;
  let remote: { tmux: TestTmux; server: ServerProcess; home: string } | undefined;
  const hub = () => (f as HubFixture).sessions as Client<typeof SessionService>;

  beforeAll(async () => {
    dir = await realpath(await mkdtemp(join(tmpdir(), "sa-approvals-")));
    await Promise.all(["hub-user", "n1-user", "project"].map((d) => mkdir(join(dir, d))));
    f = await startHubFixture({ env: standInEnv(join(dir, "hub-user")) });
    const env = standInEnv(join(dir, "n1-user"));
    const tmux = createTestTmux(env);
    const server = await startServerProcess({
      kind: "node",
      tmuxSocket: tmux.socketName,
      token: nodeToken,
      args: ["--name", "n1"],
      env,
    });
    remote = { tmux, server, home: server.home };
    const tokenFile = join(dir, "n1-token");
    await writeFile(tokenFile, `${nodeToken}\n`, { mode: 0o600 });
    const added = await runCli(["nodes", "add", "n1", server.url, "--token-file", tokenFile], f.cliEnv);
    if (added.code !== 0) throw new Error(`staragent nodes add failed: ${added.stderr}`);
    await waitFor(
      async () => (await f?.nodes.listNodes({}))?.nodes.every((n) => n.connectivity === Connectivity.ONLINE),
      "the Node ONLINE",
    );
    // A session that outlives the tests' own on each tmux server: a server whose last session a test
    // stops exits, and the next test's create would race that exit.
    for (const node of ["local", "n1"]) {
      await hub().createSession({ parent: `nodes/${node}`, sessionId: "keeper", cwd: dir, command: ["sleep", "3600"] });
    }
  });

  afterAll(async () => {
    await f?.close();
    await remote?.server.stop();
    await remote?.tmux.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** Starts `cli` as session `id` on `node` (with `env` set), logging its input to a file; waits until it is idle. */
  async function start(
    node: string,
    id: string,
    cli: string,
    env: readonly string[] = [],
  ): Promise<{ name: string; keys: () => Promise<string> }> {
    const keyLog = join(dir, `${node}-${id}.keys`);
    await writeFile(keyLog, "");
    await hub().createSession({
      parent: `nodes/${node}`,
      sessionId: id,
      cwd: join(dir, "project"),
      command: ["env", `STANDIN_KEYLOG=${keyLog}`, ...env, cli],
    });
    const name = `nodes/${node}/sessions/${id}`;
    await waitFor(
      async () => (await hub().getSession({ name })).session?.statusReason === StatusReason.NO_TURN,
      `${id} idle`,
    );
    return { name, keys: () => readFile(keyLog, "utf8") };
  }

  /** Waits for the session's pending prompt with its choices (read in full). */
  async function pending(name: string, what: string, kind = PromptKind.APPROVAL): Promise<PendingPrompt> {
    return waitFor(async () => {
      const p = (await hub().getSession({ name })).session?.pendingPrompt;
      return p?.kind === kind && p.choices.length > 0 && p;
    }, what);
  }

  async function session(name: string): Promise<Session | undefined> {
    return (await hub().getSession({ name })).session;
  }

  /** The pane's screen as text, from the tmux server of `node`. */
  function screen(node: string, id: string): Promise<string> {
    const tmux = node === "local" ? (f as HubFixture).tmux : (remote as { tmux: TestTmux }).tmux;
    return tmux.run("capture-pane", "-p", "-t", `=${id}:`);
  }

  for (const node of ["local", "n1"]) {
    describe(`on ${node}`, () => {
      it("approves a command: the tool runs and the turn goes on", async () => {
        const s = await start(node, "approve", "claude");
        await hub().sendChatMessage({ name: s.name, text: "please approve" });
        const prompt = await pending(s.name, "the approval");
        expect(prompt).toMatchObject({
          kind: PromptKind.APPROVAL,
          question: "Do you want to proceed?",
          command: "rm -rf build",
          truncated: false,
        });
        expect(prompt.choices.map((c) => [c.id, PromptEffect[c.effect]])).toEqual([
          ["1", "ALLOW_ONCE"],
          ["2", "ALLOW_ALWAYS"],
          ["3", "TELL_INSTEAD"],
        ]);
        const before = (await s.keys()).length;
        const answered = await hub().answerPrompt({ name: s.name, fingerprint: prompt.fingerprint, choiceId: "1" });
        expect(answered.detail).toBe("the prompt went away");
        expect((await s.keys()).slice(before)).toBe("1");
        await waitFor(async () => (await screen(node, "approve")).includes("Done: please approve"), "the turn's reply");
        expect(await screen(node, "approve")).toContain("removed build/");
        await hub().stopSession({ name: s.name, force: true });
      });

      it("denies a command: it does not run", async () => {
        const s = await start(node, "deny", "opencode");
        await hub().sendChatMessage({ name: s.name, text: "please approve" });
        const prompt = await pending(s.name, "the permission");
        const reject = prompt.choices.find((c) => c.effect === PromptEffect.DENY);
        expect(reject?.label).toBe("Reject");
        await hub().answerPrompt({ name: s.name, fingerprint: prompt.fingerprint, choiceId: reject?.id ?? "" });
        await waitFor(
          async () => (await session(s.name))?.statusReason === StatusReason.INTERRUPTED,
          "the turn interrupted",
        );
        expect(await screen(node, "deny")).not.toContain("removed build/");
        await hub().stopSession({ name: s.name, force: true });
      });

      it("tells the agent what to do instead: the text arrives whole as the next prompt", async () => {
        const s = await start(node, "tell", "claude");
        await hub().sendChatMessage({ name: s.name, text: "please approve" });
        const prompt = await pending(s.name, "the approval");
        const text = "keep build, run make clean instead";
        expect(
          await failureOf(hub().answerPrompt({ name: s.name, fingerprint: prompt.fingerprint, choiceId: "3" })),
        ).toMatchObject({ code: "InvalidArgument" });
        await hub().answerPrompt({ name: s.name, fingerprint: prompt.fingerprint, choiceId: "3", text });
        await waitFor(async () => (await screen(node, "tell")).includes(`Done: ${text}`), "the reply to the text");
        expect(await screen(node, "tell")).not.toContain("removed build/");
        await hub().stopSession({ name: s.name, force: true });
      });

      it("answers a question with one of its options", async () => {
        const s = await start(node, "question", "claude");
        await hub().sendChatMessage({ name: s.name, text: "askuser please" });
        const prompt = await pending(s.name, "the question", PromptKind.QUESTION);
        expect(prompt).toMatchObject({ kind: PromptKind.QUESTION, question: "Which database should I use?" });
        expect(prompt.choices.map((c) => c.label)).toEqual(["Postgres", "SQLite", "Type something."]);
        expect(prompt.choices.every((c) => c.effect === PromptEffect.ANSWER)).toBe(true);
        await hub().answerPrompt({ name: s.name, fingerprint: prompt.fingerprint, choiceId: "2" });
        await waitFor(
          async () => (await screen(node, "question")).includes("Done: askuser please (answer: SQLite)"),
          "the reply with the answer",
        );
        await hub().stopSession({ name: s.name, force: true });
      });

      it("refuses a stale fingerprint, an unknown choice and a missing prompt without typing a byte", async () => {
        const s = await start(node, "stale", "claude");
        await hub().sendChatMessage({ name: s.name, text: "please approve" });
        const first = await pending(s.name, "the approval");
        const unknown = await failureOf(
          hub().answerPrompt({ name: s.name, fingerprint: first.fingerprint, choiceId: "9" }),
        );
        expect(unknown.code).toBe("InvalidArgument");
        expect(unknown.message).toContain('"9" is not a choice');
        // The person answers in the terminal instead; then another prompt comes up.
        await (node === "local" ? (f as HubFixture).tmux : (remote as { tmux: TestTmux }).tmux).run(
          "send-keys",
          "-t",
          "=stale:",
          "Escape",
        );
        await waitFor(async () => (await session(s.name))?.statusReason === StatusReason.INTERRUPTED, "interrupted");
        const none = await failureOf(
          hub().answerPrompt({ name: s.name, fingerprint: first.fingerprint, choiceId: "1" }),
        );
        expect(none).toEqual({
          code: "FailedPrecondition",
          message: "the prompt changed: no prompt is on screen now; nothing was typed",
        });
        await hub().sendChatMessage({ name: s.name, text: "askuser please" });
        const second = await pending(s.name, "the question", PromptKind.QUESTION);
        expect(second.question, JSON.stringify(second)).toBe("Which database should I use?");
        expect(second.fingerprint).not.toBe(first.fingerprint);
        const before = await s.keys();
        const stale = await failureOf(
          hub().answerPrompt({ name: s.name, fingerprint: first.fingerprint, choiceId: "1" }),
        );
        expect(stale.code).toBe("FailedPrecondition");
        expect(stale.message).toMatch(
          /^the prompt changed: another one is on screen now: "Which database should I use\?"/,
        );
        expect(await s.keys()).toBe(before);
        expect((await session(s.name))?.pendingPrompt?.fingerprint).toBe(second.fingerprint);
        await hub().stopSession({ name: s.name, force: true });
      });

      it("keeps an answer and a chat send racing it whole", async () => {
        const s = await start(node, "race", "claude");
        await hub().sendChatMessage({ name: s.name, text: "please approve" });
        const prompt = await pending(s.name, "the approval");
        const before = (await s.keys()).length;
        const message = "a second message that must arrive whole";
        const [answer, chat] = await Promise.allSettled([
          hub().answerPrompt({ name: s.name, fingerprint: prompt.fingerprint, choiceId: "1" }),
          hub().sendChatMessage({ name: s.name, text: message }),
        ]);
        expect(answer.status).toBe("fulfilled");
        const typed = (await s.keys()).slice(before);
        const paste = `\x1b[200~${message}\x1b[201~\r`;
        // The chat was either refused before typing (the prompt was still up) or typed whole after the answer.
        if (chat.status === "fulfilled") expect(typed).toBe(`1${paste}`);
        else expect(typed).toBe("1");
        await hub().stopSession({ name: s.name, force: true });
      });
    });
  }

  it("says a key the CLI has not taken up yet was typed but its prompt still shows, and types no text after it", {
    timeout: 30_000,
  }, async () => {
    // A CLI too busy to redraw in time: it takes its keys up well after the answer's wait.
    const lag = ANSWER_CONFIRM_TIMEOUT_MS + 2_000;
    const s = await start("local", "busy", "claude", [`STANDIN_INPUT_LAG_MS=${lag}`]);
    await hub().sendChatMessage({ name: s.name, text: "please approve" });
    const prompt = await pending(s.name, "the approval");
    const before = (await s.keys()).length;
    const began = Date.now();
    const answered = await hub().answerPrompt({
      name: s.name,
      fingerprint: prompt.fingerprint,
      choiceId: "3",
      text: "never typed",
    });
    expect(Date.now() - began).toBeGreaterThanOrEqual(ANSWER_CONFIRM_TIMEOUT_MS);
    expect(answered.detail).toBe(
      `typed, but the prompt was still on screen after ${ANSWER_CONFIRM_TIMEOUT_MS / 1000} s`,
    );
    expect(answered.nextPrompt?.fingerprint).toBe(prompt.fingerprint);
    expect((await s.keys()).slice(before)).toBe("3");
    await hub().stopSession({ name: s.name, force: true });
  });

  it("lists prompts and answers one from the command line, never blind without a terminal", async () => {
    const s = await start("n1", "cli", "claude");
    await hub().sendChatMessage({ name: s.name, text: "please approve" });
    const prompt = await pending(s.name, "the approval");
    const env = (f as HubFixture).cliEnv;
    const table = await runCli(["prompts"], env);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(
      /^n1\/cli\s+Do you want to proceed\?\s+rm -rf build\s+1=allow-once 2=allow-always 3=tell-instead$/m,
    );
    const listed = await runCli(["prompts", "--json"], env);
    const json = JSON.parse(listed.stdout) as {
      prompts: { session: string; pendingPrompt: { fingerprint: string } }[];
    };
    expect(json.prompts.find((p) => p.session === s.name)?.pendingPrompt.fingerprint).toBe(prompt.fingerprint);
    const before = await s.keys();
    const blind = await runCli(["answer", "n1/cli", "1"], env);
    expect(blind.code).not.toBe(0);
    expect(blind.stderr).toContain("not at a terminal");
    expect(await s.keys()).toBe(before);
    const answered = await runCli(["answer", "n1/cli", "1", "--fingerprint", prompt.fingerprint], env);
    expect(answered).toMatchObject({ code: 0, stdout: "answered n1/cli: the prompt went away\n" });
    await hub().stopSession({ name: s.name, force: true });
  });

  it("writes every answer, refused or not, to the owning machine's audit log", async () => {
    const lines = (await readFile(join((remote as { home: string }).home, "audit.jsonl"), "utf8")).trim().split("\n");
    const entries = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(entries.length).toBeGreaterThanOrEqual(6);
    const approved = entries.find((e) => e.session === "approve");
    expect(approved).toMatchObject({
      tokenKind: "user",
      kind: "APPROVAL",
      question: "Do you want to proceed?",
      subject: "rm -rf build",
      choiceId: "1",
      choiceLabel: "Yes",
      outcome: "the prompt went away",
    });
    expect(String(approved?.from)).toMatch(/through the Hub at /);
    const told = entries.find(
      (e) => e.session === "tell" && e.outcome !== "" && !String(e.outcome).startsWith("refused"),
    );
    expect(told?.textBytes).toBe("keep build, run make clean instead".length);
    expect(lines.join("\n")).not.toContain("make clean");
    expect(entries.some((e) => String(e.outcome).startsWith("refused: FailedPrecondition: the prompt changed"))).toBe(
      true,
    );
  });
});
