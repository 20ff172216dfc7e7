import { Cli, SessionStatus, StatusReason } from "../../../../gen/staragent/v1/session_pb.js";
import type { AgentContext, AgentModule, AgentSignals } from "../agent.js";
import type { ProcessInfo } from "../process-table.js";
import { shellChatParser } from "./chat-parser.js";
import { isShell, programName } from "./shell-names.js";

/**
 * A plain shell as the pane's own process (docs/status.md, "Per CLI": shells): working while
 * tmux reports a foreground command other than the shell, idle at its prompt. Read from the pane
 * alone (no files, no screen), and looked for only when no agent CLI runs below the pane.
 */
export class ShellModule implements AgentModule {
  readonly cli = Cli.SHELL;
  readonly name = "shell";
  readonly scope = "root";
  readonly adoptable = false;
  readonly chatParser = shellChatParser;
  /** Ctrl-C: the foreground command's interrupt. */
  readonly interrupt = { keys: ["C-c"] };

  recognises(process: ProcessInfo): boolean {
    return isShell(process);
  }

  async observe(context: AgentContext): Promise<AgentSignals> {
    const root = context.process;
    const foreground = context.pane.paneCurrentCommand;
    const running = foreground !== "" && foreground !== programName(root) && foreground !== root.comm;
    return running
      ? signals(SessionStatus.WORKING, StatusReason.COMMAND_RUNNING, `foreground: ${foreground}`)
      : signals(SessionStatus.IDLE, StatusReason.SHELL_PROMPT, "shell at its prompt");
  }
}

function signals(status: SessionStatus, reason: StatusReason, detail: string): AgentSignals {
  return { turn: "none", completionId: "", detail, verdict: { status, reason } };
}
