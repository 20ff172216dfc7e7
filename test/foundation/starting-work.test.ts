import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, realpath, rm, stat, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Connectivity } from "../../gen/staragent/v1/node_service_pb.js";
import { ChatRole, Cli, SessionStatus, StatusReason } from "../../gen/staragent/v1/session_pb.js";
import { REPO_ROOT, runCli, type ServerProcess, startServerProcess } from "../support/servers.js";
import { createTestTmux, type TestTmux } from "../support/tmux.js";
import { waitFor } from "../support/wait.js";
import { failureOf, type HubFixture, startHubFixture, testToken } from "./hub-fixture.js";

/** How long after its session stopped a conversation is resumed (past the slack around a start, 1 s). */
const RESUMED_LATER_MS = 2_000;

const STAND_INS = join(REPO_ROOT, "test/stand-ins");
/** How long the observation window lasts in which a queued message must stay untyped. */
const UNTYPED_WINDOW_MS = 1_500;

/**
 * Starting and continuing work on a remote Node, through the Hub: queued chat messages
 * (QueueChatMessage) typed once when the session is next ready, never during a prompt or a turn, and
 * once across a restart of the Node; the folder picker's calls; sessions on new git worktrees.
 */
describe("starting work through the Hub on a remote Node", () => {
  const nodeToken = testToken();
  let dir: string;
  let project: string;
  let env: NodeJS.ProcessEnv;
  let tmux: TestTmux;
  let node: ServerProcess;
  let nodeHome: string;
  let f: HubFixture | undefined;
  const hub = () => f as HubFixture;
  const name = (session: string) => `nodes/w1/sessions/${session}`;
  const screen = (session: string) => tmux.run("capture-pane", "-p", "-t", `=${session}:`);
  const session = async (s: string) => (await hub().sessions.getSession({ name: name(s) })).session;
  const userTurns = async (s: string) =>
    (await hub().sessions.getChat({ name: name(s) })).messages
      .filter((m) => m.role === ChatRole.USER)
      .map((m) => m.text);

  const startNode = async () => {
    node = await startServerProcess({
      kind: "node",
      tmuxSocket: tmux.socketName,
      token: nodeToken,
      args: ["--name", "w1"],
      env,
      home: nodeHome,
    });
  };
  const register = async () => {
    const added = await hub().nodes.addNode({ nodeId: "w1", url: node.url, token: nodeToken });
    expect(added.node?.name).toBe("nodes/w1");
    await waitFor(
      async () => (await hub().nodes.getNode({ name: "nodes/w1" })).node?.connectivity === Connectivity.ONLINE,
      "w1 ONLINE",
    );
  };
  /** Starts a Claude Code stand-in on w1 whose turns take `turnMs`, and waits for its input box. */
  const startAgent = async (s: string, turnMs: number) => {
    await hub().sessions.createSession({
      parent: "nodes/w1",
      sessionId: s,
      cwd: project,
      command: ["env", `STANDIN_TURN_MS=${turnMs}`, "claude"],
    });
    await waitFor(async () => (await screen(s)).includes("? for shortcuts"), `${s}'s input box`);
  };

  beforeAll(async () => {
    dir = await realpath(await mkdtemp(join(tmpdir(), "sa-queue-")));
    project = join(dir, "project");
    nodeHome = join(dir, "node-home");
    const user = join(dir, "user");
    await Promise.all([mkdir(project), mkdir(user), mkdir(nodeHome)]);
    env = {
      ...process.env,
      HOME: user,
      PATH: `${STAND_INS}:${process.env.PATH}`,
      STANDIN_THINK_MS: "50",
      STANDIN_TURN_MS: "200",
      CLAUDE_CONFIG_DIR: "",
      CODEX_HOME: "",
      XDG_DATA_HOME: "",
    };
    tmux = createTestTmux(env);
    await startNode();
    f = await startHubFixture();
    await register();
  });

  afterAll(async () => {
    await f?.close();
    await node?.stop();
    await tmux?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("types a message queued during a turn once, when that turn has finished", async () => {
    await startAgent("busy", 2_500);
    await hub().sessions.sendChatMessage({ name: name("busy"), text: "first task" });
    await waitFor(async () => (await session("busy"))?.status === SessionStatus.WORKING, "the first turn working");
    const queued = await hub().sessions.queueChatMessage({ name: name("busy"), text: "second task" });
    expect(queued.message).toMatchObject({ text: "second task", typing: false, uncertain: false });
    const listed = await hub().sessions.listQueuedMessages({ name: name("busy") });
    expect(listed.messages.map((m) => m.id)).toEqual([queued.message?.id]);
    // While the first turn runs, the message waits: not on screen, not being typed.
    let observed = 0;
    while ((await session("busy"))?.status === SessionStatus.WORKING) {
      expect(await screen("busy")).not.toContain("second task");
      const waiting = await hub().sessions.listQueuedMessages({ name: name("busy") });
      if ((await session("busy"))?.status !== SessionStatus.WORKING) break;
      expect(waiting.messages).toMatchObject([{ text: "second task", typing: false }]);
      expect((await session("busy"))?.queuedMessages).toBe(1);
      observed++;
    }
    expect(observed).toBeGreaterThan(0);

    await waitFor(async () => (await userTurns("busy")).includes("second task"), "the queued message typed", 20_000);
    await waitFor(async () => (await session("busy"))?.queuedMessages === 0, "the queue emptied");
    expect((await hub().sessions.listQueuedMessages({ name: name("busy") })).messages).toEqual([]);
    await waitFor(
      async () => (await session("busy"))?.statusReason === StatusReason.UNSEEN_COMPLETION,
      "the second turn finished",
      20_000,
    );
    expect(await userTurns("busy")).toEqual(["first task", "second task"]);
  });

  it("never types while an approval prompt is on screen, then types once it is answered and the turn ends", async () => {
    await startAgent("asks", 300);
    await hub().sessions.sendChatMessage({ name: name("asks"), text: "approve please" });
    await waitFor(
      async () => (await session("asks"))?.statusReason === StatusReason.INPUT_PROMPT,
      "the approval prompt",
    );
    await hub().sessions.queueChatMessage({ name: name("asks"), text: "after the approval" });
    const until = Date.now() + UNTYPED_WINDOW_MS;
    while (Date.now() < until) {
      expect((await session("asks"))?.statusReason).toBe(StatusReason.INPUT_PROMPT);
      expect(await screen("asks")).not.toContain("after the approval");
      expect((await hub().sessions.listQueuedMessages({ name: name("asks") })).messages).toMatchObject([
        { text: "after the approval", typing: false },
      ]);
    }
    await tmux.run("send-keys", "-t", "=asks:", "y");
    await waitFor(
      async () => (await userTurns("asks")).includes("after the approval"),
      "the queued message typed",
      20_000,
    );
    expect(await userTurns("asks")).toEqual(["approve please", "after the approval"]);
  });

  it("cancels a queued message before it is typed, and refuses what it cannot cancel or queue", async () => {
    await startAgent("cancel", 3_000);
    await hub().sessions.sendChatMessage({ name: name("cancel"), text: "a slow one" });
    // Queued while the turn runs: queued before the machine saw the turn start, it would be typed at once.
    await waitFor(async () => (await session("cancel"))?.status === SessionStatus.WORKING, "the slow turn working");
    const queued = await hub().sessions.queueChatMessage({ name: name("cancel"), text: "never typed" });
    await hub().sessions.cancelQueuedMessage({ name: name("cancel"), id: queued.message?.id ?? "" });
    expect((await hub().sessions.listQueuedMessages({ name: name("cancel") })).messages).toEqual([]);
    const again = await failureOf(
      hub().sessions.cancelQueuedMessage({ name: name("cancel"), id: queued.message?.id ?? "" }),
    );
    expect(again.code).toBe("NotFound");
    expect(again.message).toMatch(/has no queued message .* typed or cancelled already/);
    const empty = await failureOf(hub().sessions.queueChatMessage({ name: name("cancel"), text: "  " }));
    expect(empty).toMatchObject({ code: "InvalidArgument" });
    expect(empty.message).toMatch(/^text: the message is empty/);
    const missing = await failureOf(hub().sessions.queueChatMessage({ name: name("nope"), text: "hi" }));
    expect(missing.code).toBe("NotFound");
    await waitFor(
      async () => (await session("cancel"))?.statusReason === StatusReason.UNSEEN_COMPLETION,
      "the turn finished",
      20_000,
    );
    expect(await userTurns("cancel")).toEqual(["a slow one"]);
  });

  it("keeps a queued message across a restart of the Node and types it once", async () => {
    await startAgent("restart", 4_000);
    await hub().sessions.sendChatMessage({ name: name("restart"), text: "before the restart" });
    await hub().sessions.queueChatMessage({ name: name("restart"), text: "after the restart" });
    await node.stop();
    await hub().nodes.removeNode({ name: "nodes/w1" });
    await startNode();
    await register();
    expect((await hub().sessions.listQueuedMessages({ name: name("restart") })).messages).toMatchObject([
      { text: "after the restart" },
    ]);
    await waitFor(
      async () => (await userTurns("restart")).includes("after the restart"),
      "typed after restart",
      20_000,
    );
    await waitFor(
      async () => (await session("restart"))?.statusReason === StatusReason.UNSEEN_COMPLETION,
      "the queued turn finished",
      20_000,
    );
    expect(await userTurns("restart")).toEqual(["before the restart", "after the restart"]);
  });

  it("`staragent send --when-idle` queues, `staragent queue` lists and cancels", async () => {
    await startAgent("cli", 3_000);
    // `long`: the stand-in's turn runs until interrupted, so the message is still queued when cancelled.
    await hub().sessions.sendChatMessage({ name: name("cli"), text: "keep working long" });
    await waitFor(async () => (await session("cli"))?.status === SessionStatus.WORKING, "working");
    const sent = await runCli(["send", "--when-idle", name("cli"), "later please"], hub().cliEnv);
    expect(sent).toMatchObject({ code: 0, stderr: "" });
    expect(sent.stdout).toMatch(/^queued for nodes\/w1\/sessions\/cli: typed when it is next idle \(id \S+\)\n$/);
    const ls = await runCli(["queue", name("cli")], hub().cliEnv);
    expect(ls.code).toBe(0);
    expect(ls.stdout).toMatch(/^ID\s+QUEUED\s+STATE\s+TEXT\n\S+\s+\d+s ago\s+waiting\s+later please\n$/);
    const id = /^(\S+)/m.exec(ls.stdout.split("\n")[1] ?? "")?.[1] ?? "";
    const cancelled = await runCli(["queue", name("cli"), "--cancel", id], hub().cliEnv);
    expect(cancelled).toMatchObject({ code: 0, stdout: `cancelled ${id}\n` });
    const json = await runCli(["queue", name("cli"), "--json"], hub().cliEnv);
    expect(JSON.parse(json.stdout)).toEqual({ messages: [] });
  });

  it("lists and makes folders on the Node, refusing escapes, control characters and StarAgent's home", async () => {
    await mkdir(join(project, "repo", ".git"), { recursive: true });
    await writeFile(join(project, "repo", ".git", "HEAD"), "ref: refs/heads/feature/x\n");
    await mkdir(join(project, ".hidden"));
    await mkdir(join(project, "plain"));
    const listed = await hub().sessions.listDirectories({ parent: "nodes/w1", path: project });
    expect(listed.directory).toMatchObject({ path: project, gitRepository: false });
    expect(listed.parentPath).toBe(dir);
    expect(listed.directories.map((d) => [d.name, d.gitRepository, d.branch])).toEqual([
      ["plain", false, ""],
      ["repo", true, "feature/x"],
    ]);
    const hidden = await hub().sessions.listDirectories({ parent: "nodes/w1", path: project, showHidden: true });
    expect(hidden.directories.map((d) => d.name)).toEqual([".hidden", "plain", "repo"]);
    const home = await hub().sessions.listDirectories({ parent: "nodes/w1" });
    expect(home.directory?.path).toBe(env.HOME);

    const made = await hub().sessions.createDirectory({ parent: "nodes/w1", path: join(project, "new one") });
    expect(made.directory).toMatchObject({ name: "new one", path: join(project, "new one") });
    const cases: Array<[() => Promise<unknown>, string, RegExp]> = [
      [
        () => hub().sessions.createDirectory({ parent: "nodes/w1", path: join(project, "plain") }),
        "AlreadyExists",
        /exists already/,
      ],
      [
        () => hub().sessions.createDirectory({ parent: "nodes/w1", path: join(project, "a\nb") }),
        "InvalidArgument",
        /control character/,
      ],
      [
        () => hub().sessions.createDirectory({ parent: "nodes/w1", path: "relative/x" }),
        "InvalidArgument",
        /not an absolute path/,
      ],
      [
        () => hub().sessions.createDirectory({ parent: "nodes/w1", path: `${project}/../x` }),
        "InvalidArgument",
        /"\.\." part/,
      ],
      [
        () => hub().sessions.createDirectory({ parent: "nodes/w1", path: join(nodeHome, "x") }),
        "PermissionDenied",
        /inside StarAgent's own folder/,
      ],
      [
        () => hub().sessions.createDirectory({ parent: "nodes/w1", path: join(project, "no", "such") }),
        "NotFound",
        /parent folder .* does not exist/,
      ],
      [
        () => hub().sessions.listDirectories({ parent: "nodes/w1", path: join(project, "none") }),
        "NotFound",
        /does not exist/,
      ],
      [() => hub().sessions.listDirectories({ parent: "nodes/-", path: project }), "InvalidArgument", /name one node/],
    ];
    for (const [call, code, message] of cases) {
      const failure = await failureOf(call());
      expect(failure.code).toBe(code);
      expect(failure.message).toMatch(message);
    }
  });

  describe("sessions on new git worktrees", () => {
    let repo: string;
    const gitIn = (cwd: string, ...args: string[]) =>
      execFileSync("git", ["-C", cwd, ...args], { encoding: "utf8", env: { ...env, GIT_CONFIG_GLOBAL: "/dev/null" } });
    const exists = (path: string) =>
      stat(path).then(
        () => true,
        () => false,
      );

    beforeAll(async () => {
      repo = join(dir, "app");
      await mkdir(join(repo, "src"), { recursive: true });
      gitIn(repo, "init", "-q", "-b", "main");
      gitIn(repo, "config", "user.email", "t@example.com");
      gitIn(repo, "config", "user.name", "T");
      await writeFile(join(repo, "src", "a.txt"), "one\n");
      gitIn(repo, "add", ".");
      gitIn(repo, "commit", "-q", "-m", "first");
    });

    it("creates a session on a new worktree and branch beside the repository, in the same subfolder", async () => {
      const created = await hub().sessions.createSession({
        parent: "nodes/w1",
        sessionId: "wt-fix",
        cwd: join(repo, "src"),
        command: ["sleep", "600"],
        worktree: { branch: "fix/login" },
      });
      const path = join(dir, "app-fix-login");
      expect(created.session?.worktree).toMatchObject({ path, branch: "fix/login", repositoryRoot: repo });
      expect(created.session?.cwd).toBe(join(path, "src"));
      expect(gitIn(repo, "branch", "--list", "--format=%(refname:short)", "fix/login").trim()).toBe("fix/login");
      expect(gitIn(repo, "worktree", "list", "--porcelain")).toContain(`worktree ${path}\n`);
      expect(await readFile(join(path, "src", "a.txt"), "utf8")).toBe("one\n");
      const listed = (await hub().sessions.getSession({ name: name("wt-fix") })).session;
      expect(listed?.worktree?.path).toBe(path);
    });

    it("refuses what it cannot do with the reason, and creates nothing", async () => {
      const sessionsBefore = (await hub().sessions.listSessions({ parent: "nodes/w1" })).sessions.length;
      const foldersBefore = await readdir(dir);
      const cases: Array<[Record<string, string>, string, string, RegExp]> = [
        [{ branch: "fix/login" }, repo, "AlreadyExists", /a branch fix\/login exists already/],
        [{ branch: "a..b" }, repo, "InvalidArgument", /git does not allow "a\.\.b"/],
        [{ branch: "-x" }, repo, "InvalidArgument", /not a usable branch name/],
        [{ branch: "ok", baseRef: "no-such-ref" }, repo, "FailedPrecondition", /"no-such-ref" is not a commit/],
        [{ branch: "ok", path: join(dir, "project") }, repo, "AlreadyExists", /exists already; name a new folder/],
        [
          { branch: "ok", path: join(dir, "app-fix-login", "inner") },
          repo,
          "FailedPrecondition",
          /inside the worktree/,
        ],
        [{ branch: "ok" }, project, "FailedPrecondition", /is not in a git repository/],
      ];
      for (const [worktree, cwd, code, message] of cases) {
        const failure = await failureOf(
          hub().sessions.createSession({
            parent: "nodes/w1",
            sessionId: "wt-bad",
            cwd,
            command: ["sleep", "600"],
            worktree,
          }),
        );
        expect(failure.code, JSON.stringify(worktree)).toBe(code);
        expect(failure.message).toMatch(message);
      }
      expect((await hub().sessions.listSessions({ parent: "nodes/w1" })).sessions.length).toBe(sessionsBefore);
      expect(await readdir(dir)).toEqual(foldersBefore);
      expect(gitIn(repo, "branch", "--list", "ok")).toBe("");
    });

    it("removes the worktree on stop only when that loses nothing, and never the branch", async () => {
      const path = join(dir, "app-fix-login");
      await writeFile(join(path, "src", "b.txt"), "work in progress\n");
      const dirty = await failureOf(hub().sessions.stopSession({ name: name("wt-fix"), removeWorktree: true }));
      expect(dirty.code).toBe("FailedPrecondition");
      expect(dirty.message).toMatch(
        /would lose work: 1 file has uncommitted changes or are untracked.*Nothing was stopped/,
      );
      expect((await hub().sessions.getSession({ name: name("wt-fix") })).session?.tmuxSession).toBe("wt-fix");

      gitIn(path, "add", ".");
      gitIn(path, "-c", "user.email=t@example.com", "-c", "user.name=T", "commit", "-q", "-m", "wip");
      const unpushed = await failureOf(hub().sessions.stopSession({ name: name("wt-fix"), removeWorktree: true }));
      expect(unpushed.message).toMatch(/1 commit is on no other branch \(merge or push fix\/login first\)/);
      expect(await readFile(join(path, "src", "b.txt"), "utf8")).toBe("work in progress\n");

      gitIn(repo, "branch", "kept-copy", "fix/login");
      await hub().sessions.stopSession({ name: name("wt-fix"), removeWorktree: true });
      expect(await exists(path)).toBe(false);
      expect(gitIn(repo, "branch", "--list", "--format=%(refname:short)", "fix/login").trim()).toBe("fix/login");
      expect(gitIn(repo, "show", "fix/login:src/b.txt")).toBe("work in progress\n");
      const gone = await failureOf(hub().sessions.getSession({ name: name("wt-fix") }));
      expect(gone.code).toBe("NotFound");
    });

    it("keeps the worktree when stopped without remove_worktree, and refuses remove_worktree for other sessions", async () => {
      await hub().sessions.createSession({
        parent: "nodes/w1",
        sessionId: "wt-keep",
        cwd: repo,
        command: ["sleep", "600"],
        worktree: { branch: "keep-me", path: join(dir, "kept") },
      });
      await hub().sessions.stopSession({ name: name("wt-keep") });
      expect(await exists(join(dir, "kept", "src", "a.txt"))).toBe(true);
      await hub().sessions.createSession({
        parent: "nodes/w1",
        sessionId: "plain",
        cwd: repo,
        command: ["sleep", "600"],
      });
      const refused = await failureOf(hub().sessions.stopSession({ name: name("plain"), removeWorktree: true }));
      expect(refused.code).toBe("FailedPrecondition");
      expect(refused.message).toMatch(/plain has no worktree made by StarAgent; nothing was stopped/);
      await hub().sessions.stopSession({ name: name("plain") });
    });

    it("`staragent new --worktree` and `staragent stop --remove-worktree`", async () => {
      const made = await runCli(
        ["new", "wt-cli", "--node", "w1", "--cwd", repo, "--worktree", "cli-branch", "--", "sleep", "600"],
        hub().cliEnv,
      );
      expect(made).toMatchObject({ code: 0, stderr: "" });
      expect(made.stdout).toBe(
        `created nodes/w1/sessions/wt-cli on a new worktree ${join(dir, "app-cli-branch")} (branch cli-branch)\n`,
      );
      const stopped = await runCli(["stop", "w1/wt-cli", "--remove-worktree"], hub().cliEnv);
      expect(stopped).toMatchObject({ code: 0, stdout: "stopped nodes/w1/sessions/wt-cli and removed its worktree\n" });
      expect(await exists(join(dir, "app-cli-branch"))).toBe(false);
    });
  });

  describe("resuming a past conversation", () => {
    // A folder of its own: the sessions of the tests above left conversations in `project`.
    let folder: string;
    beforeAll(async () => {
      folder = join(dir, "resume-project");
      await mkdir(folder);
    });
    /** Runs two turns in a new stand-in session of `cli`, waiting for each to finish; returns its name. */
    const twoTurns = async (session: string, program: string, ready: string) => {
      await hub().sessions.createSession({ parent: "nodes/w1", sessionId: session, cwd: folder, command: [program] });
      await waitFor(async () => (await screen(session)).includes(ready), `${session}'s input`);
      for (const text of [`remember 42 in ${session}`, `and then ${session}`]) {
        await hub().sessions.sendChatMessage({ name: name(session), text });
        await waitFor(
          async () =>
            (await userTurns(session)).includes(text) && (await session_(session))?.status !== SessionStatus.WORKING,
          `${text} done`,
          20_000,
        );
      }
    };
    const session_ = session;
    const cases = [
      { cli: Cli.CLAUDE, program: "claude", ready: "? for shortcuts" },
      { cli: Cli.CODEX, program: "codex", ready: "Ask Codex to do anything" },
      { cli: Cli.OPENCODE, program: "opencode", ready: "Ask anything" },
    ] as const;

    for (const { cli, program, ready } of cases) {
      it(`lists a ${program} conversation and resumes it with its old turns in the chat`, async () => {
        const first = `${program}-first`;
        await twoTurns(first, program, ready);
        const listed = await hub().sessions.listConversations({ parent: "nodes/w1", cwd: folder, cli });
        expect(listed.conversations).toHaveLength(1);
        const conversation = listed.conversations[0];
        expect(conversation).toMatchObject({
          cli,
          cwd: folder,
          firstPrompt: `remember 42 in ${first}`,
          lastPrompt: `and then ${first}`,
          turnCount: 2,
          turnCountExact: true,
          openInSession: name(first),
        });
        await hub().sessions.stopSession({ name: name(first) });
        const afterStop = await hub().sessions.listConversations({ parent: "nodes/w1", cwd: folder, cli });
        expect(afterStop.conversations[0]?.openInSession).toBe("");
        // Resumed later, not at once: its log is then older than any slack around a process's start.
        await new Promise((r) => setTimeout(r, RESUMED_LATER_MS));

        const resumed = `${program}-resumed`;
        await hub().sessions.createSession({
          parent: "nodes/w1",
          sessionId: resumed,
          cwd: folder,
          command: [],
          resume: { cli, conversationId: conversation?.id ?? "" },
        });
        await waitFor(async () => (await screen(resumed)).includes(ready), `${resumed}'s input`);
        // The old turns show before any new one: the resumed log was last written well before this
        // process started, and is its own all the same.
        const old = [`remember 42 in ${first}`, `and then ${first}`];
        let seen: string[] = [];
        await waitFor(
          async () => {
            seen = await userTurns(resumed);
            return seen.length === old.length && seen.every((t, i) => t === old[i]);
          },
          () => `the old turns in the chat before a new one (it held ${JSON.stringify(seen)})`,
        );
        await hub().sessions.sendChatMessage({ name: name(resumed), text: "one more" });
        const expected = [...old, "one more"];
        await waitFor(
          async () => {
            seen = await userTurns(resumed);
            return seen.length === expected.length && seen.every((t, i) => t === expected[i]);
          },
          () => `the old turns and the new one in the chat (it held ${JSON.stringify(seen)})`,
          20_000,
        );
        const again = await hub().sessions.listConversations({ parent: "nodes/w1", cwd: folder, cli });
        expect(again.conversations.map((c) => [c.id, c.turnCount, c.openInSession])).toEqual([
          [conversation?.id, 3, name(resumed)],
        ]);
        await hub().sessions.stopSession({ name: name(resumed) });
      });
    }

    // Logs the real CLIs wrote (Claude Code 2.1.332, Codex 0.171.0), placed in the Node's HOME as if
    // they had run in `recorded`; a stand-in then resumes each and goes on writing it.
    const RECORDED = [
      {
        cli: Cli.CLAUDE,
        program: "claude",
        ready: "? for shortcuts",
        file: "claude/fixtures/chat-history/2.1.332/conversation.jsonl",
        cwd: "/tmp/sa-compat-claude-work-a8644f",
        id: "eb68e545-1878-4a93-b770-c735f11438ed",
        place: (home: string, folder: string, id: string) =>
          join(home, ".claude", "projects", folder.replace(/[^A-Za-z0-9]/g, "-"), `${id}.jsonl`),
      },
      {
        cli: Cli.CODEX,
        program: "codex",
        ready: "Ask Codex to do anything",
        file: "codex/fixtures/chat-history/0.171.0/conversation.jsonl",
        cwd: "/tmp/sa-compat-codex-work-cEfa7E",
        id: "01a22d4d-8dc4-7712-bcdc-49c54be1b5d6",
        place: (home: string, _folder: string, id: string) =>
          join(home, ".codex", "sessions", "2026", "11", "30", `rollout-2026-11-30T16-33-07-${id}.jsonl`),
      },
    ] as const;
    const promptsOf = (cli: Cli) => [
      "first prompt: say hello",
      "second prompt: écris le fichier 日本語 🎉",
      "third prompt: a long answer please",
      "fourth prompt: in progress",
      // Claude Code records the typed `/compact` as the person's message; Codex does not.
      ...(cli === Cli.CLAUDE ? ["/compact"] : []),
      "fifth prompt: after compaction",
    ];
    for (const recorded of RECORDED) {
      it(`resumes a ${recorded.program} conversation recorded from the real CLI, its old turns in the chat`, async () => {
        const folder = join(dir, `recorded-${recorded.program}`);
        await mkdir(folder);
        const log = recorded.place(join(dir, "user"), folder, recorded.id);
        await mkdir(join(log, ".."), { recursive: true });
        const text = await readFile(join(REPO_ROOT, "services/node/agents", recorded.file), "utf8");
        await writeFile(log, text.replaceAll(recorded.cwd, folder));
        // Yesterday's conversation: last written a day ago.
        const yesterday = new Date(Date.now() - 24 * 60 * 60 * 1000);
        await utimes(log, yesterday, yesterday);
        const prompts = promptsOf(recorded.cli);
        const listed = await hub().sessions.listConversations({ parent: "nodes/w1", cwd: folder, cli: recorded.cli });
        expect(listed.conversations.map((c) => [c.id, c.firstPrompt, c.lastPrompt, c.turnCount])).toEqual([
          [recorded.id, prompts[0], prompts.at(-1), prompts.length],
        ]);
        const session = `${recorded.program}-recorded`;
        await hub().sessions.createSession({
          parent: "nodes/w1",
          sessionId: session,
          cwd: folder,
          command: [],
          resume: { cli: recorded.cli, conversationId: recorded.id },
        });
        await waitFor(async () => (await screen(session)).includes(recorded.ready), `${session}'s input`);
        // Idle until its first new prompt: the recorded turns are an earlier run's.
        await waitFor(
          async () => (await session_(session))?.statusReason === StatusReason.NO_TURN,
          `${session} idle with no turn`,
        );
        let seen: string[] = [];
        await waitFor(
          async () => {
            seen = await userTurns(session);
            return JSON.stringify(seen) === JSON.stringify(prompts);
          },
          () => `the recorded turns in the chat before a new one (it held ${JSON.stringify(seen)})`,
        );
        await hub().sessions.sendChatMessage({ name: name(session), text: "one more after the recording" });
        await waitFor(
          async () => (await userTurns(session)).at(-1) === "one more after the recording",
          "the new turn after the recorded ones",
          20_000,
        );
        expect(await userTurns(session)).toEqual([...prompts, "one more after the recording"]);
        await hub().sessions.stopSession({ name: name(session) });
      });
    }

    it("pages every CLI's conversations newest first, and refuses what it cannot resume", async () => {
      const all = await hub().sessions.listConversations({ parent: "nodes/w1", cwd: folder, pageSize: 1 });
      expect(all.conversations).toHaveLength(1);
      expect(all.nextPageToken).not.toBe("");
      const rest = await hub().sessions.listConversations({
        parent: "nodes/w1",
        cwd: folder,
        pageSize: 10,
        pageToken: all.nextPageToken,
      });
      const both = [...all.conversations, ...rest.conversations];
      expect(both.map((c) => c.cli)).toEqual([Cli.OPENCODE, Cli.CODEX, Cli.CLAUDE]);
      expect(rest.nextPageToken).toBe("");
      const refusals: Array<[() => Promise<unknown>, string, RegExp]> = [
        [
          () =>
            hub().sessions.createSession({
              parent: "nodes/w1",
              sessionId: "r1",
              cwd: folder,
              command: [],
              resume: { cli: Cli.CLAUDE, conversationId: "0d9c8b7a-0000-4000-8000-000000000000" },
            }),
          "NotFound",
          /claude has no conversation 0d9c8b7a-.* on this node/,
        ],
        [
          () =>
            hub().sessions.createSession({
              parent: "nodes/w1",
              sessionId: "r1",
              cwd: folder,
              command: [],
              resume: { cli: Cli.CLAUDE, conversationId: "--dangerously" },
            }),
          "InvalidArgument",
          /is not a conversation id/,
        ],
        [
          () =>
            hub().sessions.createSession({
              parent: "nodes/w1",
              sessionId: "r1",
              cwd: folder,
              command: [],
              resume: { cli: Cli.SHELL, conversationId: "x" },
            }),
          "InvalidArgument",
          /SHELL has no conversations StarAgent can resume/,
        ],
        [
          () => hub().sessions.listConversations({ parent: "nodes/w1", cwd: "rel" }),
          "InvalidArgument",
          /not an absolute path/,
        ],
        [
          () => hub().sessions.listConversations({ parent: "nodes/w1", pageToken: "bogus" }),
          "InvalidArgument",
          /^page_token/,
        ],
      ];
      for (const [call, code, message] of refusals) {
        const failure = await failureOf(call());
        expect(failure.code).toBe(code);
        expect(failure.message).toMatch(message);
      }
      const ls = await runCli(["conversations", "--node", "w1", "--cwd", folder], hub().cliEnv);
      expect(ls).toMatchObject({ code: 0, stderr: "" });
      expect(ls.stdout).toMatch(/^ID\s+CLI\s+UPDATED\s+TURNS\s+OPEN IN\s+FIRST PROMPT\n/);
      expect(ls.stdout).toMatch(/\scodex\s+\d+s ago\s+3\s+-\s+remember 42 in codex-first\n/);
      const made = await runCli(
        ["new", "via-cli", "--node", "w1", "--cwd", folder, "--resume", both[2]?.id ?? ""],
        hub().cliEnv,
      );
      expect(made).toMatchObject({
        code: 0,
        stdout: `created nodes/w1/sessions/via-cli resuming claude conversation ${both[2]?.id}\n`,
      });
      await hub().sessions.stopSession({ name: name("via-cli") });
    });
  });
});
