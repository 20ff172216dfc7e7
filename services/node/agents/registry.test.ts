import { constants } from "node:fs";
import { access, chmod, mkdtemp, readdir, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterEach, describe, expect, it } from "vitest";
import {
  ChatRole,
  Cli,
  PromptKind,
  type Session,
  SessionOrigin,
  SessionStatus,
  StatusReason,
} from "../../../gen/staragent/v1/session_pb.js";
import { GetChatRequestSchema } from "../../../gen/staragent/v1/session_service_pb.js";
import { loadFixtureSetup } from "../../../test/support/agent-fixture-setup.js";
import { REPO_ROOT } from "../../../test/support/servers.js";
import { createTestTmux, type TestTmux } from "../../../test/support/tmux.js";
import { waitFor } from "../../../test/support/wait.js";
import { createLogger } from "../../common/log.js";
import type { ChatParser } from "../chat/chat-parser.js";
import { createMachine } from "../create-machine.js";
import type { Machine } from "../machine.js";
import { MachineSessionService } from "../session-service.js";
import type { AgentContext, AgentModule, AgentSignals } from "./agent.js";
import { ClaudeModule } from "./claude/claude-module.js";
import { OpencodeModule } from "./opencode/opencode-module.js";
import type { ProcessInfo } from "./process-table.js";
import { programNames } from "./program.js";
import { AgentRegistry, createBuiltInAgents } from "./registry.js";
import { ShellModule } from "./shell/shell-module.js";

/** The question the stand-in asks before it "works". */
const QUESTION = "Run the tiny tool? [y/n]";

/**
 * The stand-in this test writes: prints a short conversation (`> ` marks what the person said), asks
 * QUESTION, then says it is done and waits (its process stays the same).
 */
const STAND_IN = `#!/bin/sh
printf '> hello tiny\\n'
printf 'tiny says hello back\\n'
printf '%s ' '${QUESTION}'
read answer
printf 'tiny is done\\n'
read more
`;

/** A CLI module defined here and nowhere else, registered under Codex's enum value in place of Codex. */
class TinyModule implements AgentModule {
  readonly cli = Cli.CODEX;
  readonly name = "tiny";
  readonly scope = "tree";
  readonly adoptable = true;
  closed = 0;

  readonly chatParser: ChatParser = {
    cli: Cli.CODEX,
    parse: (lines) =>
      lines
        .filter((line) => line.trim() !== "" && !line.includes(QUESTION))
        .map((line) =>
          line.startsWith("> ")
            ? { role: ChatRole.USER, text: line.slice(2) }
            : { role: ChatRole.ASSISTANT, text: line.trim() },
        ),
  };

  recognises(process: ProcessInfo): boolean {
    return programNames(process).names.has("tiny-cli");
  }

  async observe(context: AgentContext): Promise<AgentSignals> {
    const screen = await context.screen(0);
    if (screen.includes("tiny is done")) {
      return { turn: "completed", completionId: "tiny-turn-1", detail: "tiny: done on screen" };
    }
    if (screen.includes(QUESTION)) {
      return {
        turn: "active",
        completionId: "",
        prompt: { kind: PromptKind.APPROVAL, text: QUESTION },
        detail: "tiny: question on screen",
      };
    }
    return { turn: "none", completionId: "", detail: "tiny: quiet" };
  }

  close(): void {
    this.closed++;
  }
}

describe("an agent registry with a module defined by the test", () => {
  let tmux: TestTmux | undefined;
  let machine: Machine | undefined;
  let dir: string | undefined;

  afterEach(async () => {
    await machine?.close();
    await tmux?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
    machine = undefined;
    tmux = undefined;
    dir = undefined;
  });

  it("recognises, reports, filters, offers for adoption, parses chat and closes it", async () => {
    dir = await realpath(await mkdtemp(join(tmpdir(), "sa-registry-")));
    const script = join(dir, "tiny-cli");
    await writeFile(script, STAND_IN);
    await chmod(script, 0o755);
    const tiny = new TinyModule();
    const agents = new AgentRegistry([new ClaudeModule(), tiny, new OpencodeModule(), new ShellModule()]);
    const t = createTestTmux();
    tmux = t;
    const log = createLogger("test", "error");
    const m = createMachine({ nodeName: "n1", home: dir, tmuxSocket: t.socketName, env: process.env, log, agents });
    machine = m.sessions;
    // Started behind StarAgent's back, as a person would: unmanaged, so adoptable.
    await t.run("new-session", "-d", "-s", "tiny", "-c", dir, script);
    await t.run("new-session", "-d", "-s", "plain", "-c", dir, "sh");

    const asking = await waitFor(async () => {
      const s = await m.sessions.getSession("tiny");
      return s.statusReason === StatusReason.INPUT_PROMPT && s;
    }, "the tiny CLI's question");
    expect(asking.cli).toBe(Cli.CODEX);
    expect(asking.status).toBe(SessionStatus.REVIEW);
    expect(asking.prompt).toBe(QUESTION);
    expect(asking.statusDetail).toBe("tiny: question on screen");
    expect(asking.command).toBe(`/bin/sh ${script}`);
    expect((await m.sessions.getSession("plain")).cli).toBe(Cli.SHELL);

    const service = new MachineSessionService(m.sessions, m.chat);
    const list = (filter: string) => service.listSessions({ parent: "nodes/n1", filter, pageSize: 0, pageToken: "" });
    expect((await list("cli=tiny")).sessions.map((s: Session) => s.tmuxSession)).toEqual(["tiny"]);
    expect((await list("cli=shell")).sessions.map((s: Session) => s.tmuxSession)).toEqual(["plain"]);
    const refused = await list("cli=codex").then(
      () => undefined,
      (err: unknown) => ConnectError.from(err),
    );
    expect(refused?.code).toBe(Code.InvalidArgument);
    expect(refused?.rawMessage).toContain("cli=claude|tiny|opencode|shell|other");

    expect((await m.sessions.listAdoptable()).map((a) => [a.tmuxSession, a.cli])).toEqual([["tiny", Cli.CODEX]]);
    expect((await m.sessions.adoptSession("tiny")).origin).toBe(SessionOrigin.ADOPTED);
    // The adoption records the module's name, not the enum key of the value it took.
    const adopted = JSON.parse(await readFile(join(dir, "adopted_sessions.json"), "utf8"));
    expect(adopted.sessions.map((e: { tmuxSession: string; cli: string }) => [e.tmuxSession, e.cli])).toEqual([
      ["tiny", "tiny"],
    ]);
    expect(await m.sessions.listAdoptable()).toEqual([]);

    const chat = await m.chat.getChat("tiny", create(GetChatRequestSchema, { name: "nodes/n1/sessions/tiny" }));
    expect(chat.cli).toBe(Cli.CODEX);
    expect(chat.messages.map((msg) => [ChatRole[msg.role], msg.text])).toEqual([
      ["USER", "hello tiny"],
      ["ASSISTANT", "tiny says hello back"],
    ]);

    await t.run("send-keys", "-t", "=tiny:", "y", "Enter");
    const done = await waitFor(async () => {
      const s = await m.sessions.getSession("tiny");
      return s.statusReason === StatusReason.UNSEEN_COMPLETION && s;
    }, "the tiny CLI done");
    expect(done.completionId).toBe("tiny-turn-1");
    expect((await m.sessions.markSeen("tiny", "")).statusReason).toBe(StatusReason.SEEN_COMPLETION);

    expect(tiny.closed).toBe(0);
    await m.sessions.close();
    expect(tiny.closed).toBe(1);
  });
});

describe("AgentRegistry", () => {
  it("derives the filter names, the adoptable set and the chat parsers from its modules", () => {
    const agents = createBuiltInAgents();
    // Each module's name stands for its enum value, in registry order, and `other` for the rest.
    expect([...agents.filterNames]).toEqual([...agents.modules.map((m) => [m.name, m.cli]), ["other", Cli.OTHER]]);
    expect([...agents.filterNames.keys()]).toEqual(
      expect.arrayContaining(["claude", "codex", "opencode", "shell", "other"]),
    );
    for (const module of agents.modules) {
      expect(agents.adoptable(module.cli), module.name).toBe(module.adoptable);
      expect(agents.chatParserFor(module.cli)).toBe(module.chatParser);
      expect(agents.historyFor(module.cli)).toBe(module.history);
    }
    // The agent CLIs (each module looked for below the pane) are adoptable; a shell and other programs are not.
    for (const module of agents.modules) expect(module.adoptable, module.name).toBe(module.scope === "tree");
    expect(agents.adoptable(Cli.SHELL) || agents.adoptable(Cli.OTHER)).toBe(false);
    expect(agents.chatParserFor(Cli.OTHER).cli).toBe(Cli.OTHER);
  });

  it("refuses two modules under one enum value or one name, and the values it keeps for itself", () => {
    expect(() => new AgentRegistry([new ShellModule(), new ShellModule()])).toThrow(/taken/);
    const other = Object.assign(new TinyModule(), { cli: Cli.OTHER });
    expect(() => new AgentRegistry([other])).toThrow(/reserved/);
    const named = Object.assign(new TinyModule(), { name: "other" });
    expect(() => new AgentRegistry([named])).toThrow(/the name other is taken/);
  });
});

describe("the registry-driven suites", () => {
  const agentsDir = import.meta.dirname;
  it("cover every agent module folder: each is registered under its folder's name, with the fixtures and stand-in the suites read", async () => {
    // A module folder holds `<name>-module.ts`; the suites find a module's fixtures by its name.
    const folders: string[] = [];
    for (const entry of await readdir(agentsDir, { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      const files = await readdir(join(agentsDir, entry.name));
      if (files.includes(`${entry.name}-module.ts`)) folders.push(entry.name);
    }
    const registered = createBuiltInAgents().modules.map((m) => m.name);
    expect([...registered].sort()).toEqual(folders.sort());
    for (const name of registered) {
      // chat/chat-parsers.test.ts: the captures its parser must handle.
      await access(join(agentsDir, name, "fixtures", "chat", "required.json"));
      const setup = await loadFixtureSetup(agentsDir, name);
      // status/status-flow.test.ts and status/shared-folder.test.ts drive the stand-in it names.
      if (setup?.standIn) await access(join(REPO_ROOT, "test", "stand-ins", setup.standIn.command), constants.X_OK);
    }
  });
});
