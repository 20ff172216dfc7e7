import { type ChildProcess, spawn } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChatRole, Cli, StatusReason } from "../../../gen/staragent/v1/session_pb.js";
import type { GetChatResponse } from "../../../gen/staragent/v1/session_service_pb.js";
import { failureOf, type HubFixture, startHubFixture } from "../../../test/foundation/hub-fixture.js";
import { standIns } from "../../../test/support/agent-fixture-setup.js";
import { processAlive } from "../../../test/support/process-alive.js";
import { REPO_ROOT, runCli, STARAGENT_BIN } from "../../../test/support/servers.js";
import { waitFor } from "../../../test/support/wait.js";
import { createBuiltInAgents } from "../agents/registry.js";
import { MAX_CHAT_TEXT_BYTES } from "./chat-text.js";

/** The stand-in CLIs (test/stand-ins) come first on the stand-in session's PATH (tmux's `-e` does not set PATH). */
const STAND_INS = join(REPO_ROOT, "test/stand-ins");
/** The shell prompt of the test shells, so the shell parser has a known prompt to find. */
const PROMPT = "chat-test$ ";
/**
 * Sessions running the stand-in CLIs: Claude Code's as `cc` (the tests of its input box and approval),
 * and one for every other CLI the registry has a stand-in for, named by its command.
 */
const STAND_IN_SESSIONS: readonly (readonly [session: string, command: string, unsetEnv: readonly string[]])[] = (
  await standIns(
    join(REPO_ROOT, "services/node/agents"),
    createBuiltInAgents().modules.map((m) => m.name),
  )
).map((s) => [s.command === "claude" ? "cc" : s.command, s.command, s.unsetEnv] as const);
const name = (session: string) => `nodes/local/sessions/${session}`;
/** Time the conversation test takes at most per stand-in CLI (each started, sent to and answered in turn). */
const STAND_IN_TEST_MS_PER_CLI = 20_000;

describe("chat through a real Hub process", () => {
  let f: HubFixture;
  const screen = (session: string) => f.tmux.run("capture-pane", "-p", "-t", `=${session}:`);
  const chat = (session: string, cursor = "") => f.sessions.getChat({ name: name(session), cursor });

  beforeAll(async () => {
    f = await startHubFixture();
    const home = join(f.dir, "home");
    await mkdir(home);
    const rcfile = join(f.dir, "bashrc");
    await writeFile(rcfile, `PS1='${PROMPT}'\n`);
    const start = (session: string, command: string) =>
      f.tmux.run(
        "new-session",
        "-d",
        "-s",
        session,
        "-x",
        "120",
        "-y",
        "40",
        "-c",
        f.dir,
        "-e",
        `HOME=${home}`,
        command,
      );
    await start("sh", `bash --noprofile --rcfile ${rcfile}`);
    await start("staragent-node", `bash --noprofile --rcfile ${rcfile}`);
    for (const [session, cli, unsetEnv] of STAND_IN_SESSIONS) {
      const unset = unsetEnv.map((v) => `-u ${v} `).join("");
      await start(session, `env ${unset}PATH=${STAND_INS}:${process.env.PATH ?? ""} ${cli}`);
    }
    await waitFor(async () => (await screen("sh")).includes(PROMPT.trim()), "the test shell's prompt");
    await waitFor(async () => (await screen("staragent-node")).includes(PROMPT.trim()), "the system shell's prompt");
  });
  afterAll(async () => {
    // Stop the stand-ins first and wait until they are gone, so none still writes into the folder
    // the fixture removes.
    const pids = await Promise.all(
      STAND_IN_SESSIONS.map(async ([session]) =>
        Number((await f.tmux.run("list-panes", "-t", `=${session}:`, "-F", "#{pane_pid}")).trim()),
      ),
    ).catch(() => []);
    await f?.tmux.close();
    await waitFor(() => pids.every((pid) => !processAlive(pid)), "the stand-in CLIs to exit").catch(() => undefined);
    await f?.close();
  });

  it("reads a shell's commands and output, and a cursor returns only what is new", async () => {
    const typed = await f.sessions.sendChatMessage({ name: name("sh"), text: "echo first-$((40+2))" });
    expect(typed).toMatchObject({ confirmed: false, confirmationDetail: "no native log: typed only" });
    const first = await waitFor(async () => {
      const res = await chat("sh");
      return res.messages.some((m) => m.role === ChatRole.TOOL && m.text === "first-42") && res;
    }, "the first command's output in the chat");
    expect(first).toMatchObject({ reset: true, cli: Cli.SHELL });
    expect(first.messages.map((m) => [ChatRole[m.role], m.text])).toEqual([
      ["USER", "echo first-$((40+2))"],
      ["TOOL", "first-42"],
    ]);
    expect(first.messages[1]).toMatchObject({ toolName: "shell", toolTarget: "echo first-$((40+2))" });

    await f.sessions.sendChatMessage({ name: name("sh"), text: "echo second" });
    const next: GetChatResponse = await waitFor(async () => {
      const res = await chat("sh", first.nextCursor);
      return res.messages.some((m) => m.text === "second") && res;
    }, "the second command through the cursor");
    expect(next.reset).toBe(false);
    expect(next.messages.map((m) => m.text)).toEqual(["echo second", "second"]);
    expect(next.messages.map((m) => Number(m.id))).toEqual([2, 3]);
    const unchanged = await chat("sh", next.nextCursor);
    expect(unchanged).toMatchObject({ reset: false, messages: [] });
  });

  it("refuses a system session with FAILED_PRECONDITION and types nothing", async () => {
    const before = await screen("staragent-node");
    const sent = await failureOf(f.sessions.sendChatMessage({ name: name("staragent-node"), text: "echo typed" }));
    expect(sent.code).toBe("FailedPrecondition");
    expect(sent.message).toMatch(/staragent-node is a StarAgent system session .* nothing was typed/);
    const read = await failureOf(chat("staragent-node"));
    expect(read.code).toBe("FailedPrecondition");
    expect(await screen("staragent-node")).toBe(before);
    expect(await f.tmux.run("list-buffers", "-F", "#{buffer_name}")).toBe("");
  });

  it("refuses bad input with INVALID_ARGUMENT naming the field, unknown sessions with NOT_FOUND", async () => {
    const cases: Array<[() => Promise<unknown>, string, RegExp]> = [
      [
        () => f.sessions.sendChatMessage({ name: name("sh"), text: "" }),
        "InvalidArgument",
        /^text: the message is empty/,
      ],
      [
        () => f.sessions.sendChatMessage({ name: name("sh"), text: `${"é".repeat(MAX_CHAT_TEXT_BYTES / 2)}x` }),
        "InvalidArgument",
        /^text: the message is 16385 bytes; at most 16384/,
      ],
      [
        () => f.sessions.sendChatMessage({ name: name("sh"), text: "a\u001b[201~b" }),
        "InvalidArgument",
        /^text: contains control/,
      ],
      [
        () => f.sessions.sendChatMessage({ name: name("nope"), text: "hi" }),
        "NotFound",
        /nodes\/local\/sessions\/nope not found/,
      ],
      [() => f.sessions.getChat({ name: name("nope") }), "NotFound", /not found/],
      [
        () => f.sessions.getChat({ name: name("sh"), historyLines: 50 }),
        "InvalidArgument",
        /^history_lines: 50 is out of range/,
      ],
      [() => f.sessions.getChat({ name: name("sh"), historyLines: 10_001 }), "InvalidArgument", /^history_lines/],
      [() => f.sessions.getChat({ name: name("sh"), cursor: "bogus" }), "InvalidArgument", /^cursor: not a cursor/],
    ];
    for (const [call, code, message] of cases) {
      const failure = await failureOf(call());
      expect(failure.code).toBe(code);
      expect(failure.message).toMatch(message);
    }
  });

  it("a three-line message reaches Claude Code as one user turn and is confirmed", async () => {
    await waitFor(async () => (await screen("cc")).includes("? for shortcuts"), "the claude stand-in's input box");
    const text = "first line\nsecond line\nthird line";
    const res = await f.sessions.sendChatMessage({ name: name("cc"), text });
    expect(res).toMatchObject({ confirmed: true, confirmationDetail: "claude native log shows the new user turn" });
    const read = await waitFor(async () => {
      const c = await chat("cc");
      return c.messages.some((m) => m.role === ChatRole.ASSISTANT) && c;
    }, "the stand-in's answer in the chat");
    expect(read.cli).toBe(Cli.CLAUDE);
    const users = read.messages.filter((m) => m.role === ChatRole.USER);
    expect(users.map((m) => m.text)).toEqual([text]);
  });

  it("refuses a message while Claude Code asks for approval, and types nothing", async () => {
    await f.sessions.sendChatMessage({ name: name("cc"), text: "approve please" });
    await waitFor(
      async () =>
        (await f.sessions.getSession({ name: name("cc") })).session?.statusReason === StatusReason.INPUT_PROMPT,
      "the approval prompt",
    );
    const refused = await failureOf(f.sessions.sendChatMessage({ name: name("cc"), text: "never typed" }));
    expect(refused.code).toBe("FailedPrecondition");
    expect(refused.message).toMatch(/^cc is waiting for an answer to ".+"; answer it in the terminal first/);
    expect(await screen("cc")).not.toContain("never typed");
    await f.tmux.run("send-keys", "-t", "=cc:", "Escape");
  });

  it(
    "reads every other stand-in's conversation, delivery confirmed by its native state",
    async () => {
      expect(STAND_IN_SESSIONS.length).toBeGreaterThanOrEqual(9);
      for (const [session, cli] of STAND_IN_SESSIONS.filter(([s]) => s !== "cc")) {
        await waitFor(
          async () =>
            (await f.sessions.getSession({ name: name(session) })).session?.statusReason === StatusReason.NO_TURN,
          `the ${cli} stand-in's native state read, no turn yet`,
        );
        const res = await f.sessions.sendChatMessage({ name: name(session), text: `hello ${cli}` });
        expect(res).toMatchObject({ confirmed: true, confirmationDetail: `${cli} native log shows the new user turn` });
        const read = await waitFor(async () => {
          const c = await chat(session);
          return c.messages.some((m) => m.role === ChatRole.ASSISTANT && m.text.includes(`Done: hello ${cli}`)) && c;
        }, `the ${cli} stand-in's answer`);
        expect(read.messages.map((m) => [ChatRole[m.role], m.text])).toEqual([
          ["USER", `hello ${cli}`],
          ["ASSISTANT", `Done: hello ${cli}`],
        ]);
      }
    },
    STAND_IN_TEST_MS_PER_CLI * STAND_IN_SESSIONS.length,
  );

  it("`staragent send` and `staragent chat [--follow]` print the chat", async () => {
    const sent = await runCli(["send", "sh", "echo via-cli"], f.cliEnv);
    expect(sent).toMatchObject({
      code: 0,
      stdout: "typed into nodes/local/sessions/sh, not confirmed: no native log: typed only\n",
    });
    await waitFor(
      async () => (await chat("sh")).messages.some((m) => m.text === "via-cli"),
      "the command's output in the chat",
    );
    const printed = await runCli(["chat", "sh"], f.cliEnv);
    expect(printed.code).toBe(0);
    expect(printed.stdout).toContain("[user]\n  echo via-cli\n[tool shell: echo via-cli]\n  via-cli\n");

    let follower: ChildProcess | undefined;
    try {
      follower = spawn(process.execPath, [STARAGENT_BIN, "chat", "sh", "--follow"], {
        env: { ...process.env, ...f.cliEnv },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let out = "";
      follower.stdout?.on("data", (c: Buffer) => {
        out += c.toString();
      });
      // The first print is written one message at a time: wait for all of it, not its first chunk.
      await waitFor(() => out.includes("[tool shell: echo via-cli]\n  via-cli\n"), "the follower's first print");
      const printedBefore = out.length;
      await f.sessions.sendChatMessage({ name: name("sh"), text: "echo followed" });
      await waitFor(
        () => out.slice(printedBefore).includes("[tool shell: echo followed]\n  followed\n"),
        "the follower's update",
      );
      expect(out.slice(printedBefore)).not.toContain("echo via-cli");
      const exited = new Promise<number | null>((r) => follower?.once("exit", r));
      follower.kill("SIGINT");
      expect(await exited).toBe(0);
    } finally {
      if (follower && follower.exitCode === null && follower.signalCode === null) follower.kill("SIGKILL");
    }
  });
});
