import { describe, expect, it } from "vitest";
import { SessionStatus, StatusReason } from "../../../../gen/staragent/v1/session_pb.js";
import { testPane } from "../../../../test/support/panes.js";
import type { AgentContext, AgentModule } from "../agent.js";
import type { ProcessInfo } from "../process-table.js";
import { shellChatParser } from "./chat-parser.js";
import { ShellModule } from "./shell-module.js";

function context(root: ProcessInfo, foreground: string): AgentContext {
  return {
    pane: testPane({ paneCurrentCommand: foreground }),
    process: root,
    processStart: new Date(0),
    env: async () => ({}),
    screen: async () => {
      throw new Error("a shell's status never reads the screen");
    },
    visibleScreen: async () => {
      throw new Error("a shell's status never reads the screen");
    },
    siblings: [],
  };
}

const BASH: ProcessInfo = { pid: 10, ppid: 1, comm: "bash", argv: ["-bash"], startTicks: 1 };

describe("ShellModule", () => {
  const shell: AgentModule = new ShellModule();

  it("recognises shells by argv[0] (a login dash dropped) or comm, and nothing else", () => {
    expect(shell.recognises(BASH)).toBe(true);
    expect(shell.recognises({ ...BASH, comm: "zsh", argv: ["/usr/bin/zsh"] })).toBe(true);
    expect(shell.recognises({ ...BASH, comm: "fish", argv: [] })).toBe(true);
    expect(shell.recognises({ ...BASH, comm: "vim", argv: ["vim", "bash"] })).toBe(false);
  });

  it("is idle at its prompt and working while tmux reports another foreground command", async () => {
    const idle = await shell.observe(context(BASH, "bash"));
    expect(idle.verdict).toEqual({ status: SessionStatus.IDLE, reason: StatusReason.SHELL_PROMPT });
    expect((await shell.observe(context(BASH, ""))).verdict?.reason).toBe(StatusReason.SHELL_PROMPT);
    const running = await shell.observe(context(BASH, "make"));
    expect(running.verdict).toEqual({ status: SessionStatus.WORKING, reason: StatusReason.COMMAND_RUNNING });
    expect(running.detail).toBe("foreground: make");
  });

  it("is a pane-root module nobody adopts, with the shell chat parser", () => {
    expect(shell.scope).toBe("root");
    expect(shell.adoptable).toBe(false);
    expect(shell.history).toBeUndefined();
    expect(shell.chatParser).toBe(shellChatParser);
  });
});
