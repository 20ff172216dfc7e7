import { homedir } from "node:os";
import type { ConnectRouter } from "@connectrpc/connect";
import { SessionService } from "../../gen/staragent/v1/session_service_pb.js";
import { TerminalStream } from "../../gen/staragent/v1/terminal_stream_pb.js";
import { WorkspaceService } from "../../gen/staragent/v1/workspace_service_pb.js";
import { withoutSecrets } from "../common/config.js";
import type { Logger } from "../common/log.js";
import { type AgentRegistry, createBuiltInAgents } from "./agents/registry.js";
import { MachineChat, newInputLock } from "./chat/machine-chat.js";
import { QueuedChat } from "./chat/queued-chat.js";
import { Directories } from "./directories.js";
import { Machine } from "./machine.js";
import { PastConversations } from "./past-conversations.js";
import { AuditLog } from "./prompts/audit-log.js";
import { MachinePrompts } from "./prompts/machine-prompts.js";
import { MachineSessionService } from "./session-service.js";
import { StatusEngine } from "./status/engine.js";
import { openStateFiles } from "./store/state-files.js";
import { createTerminal, type MachineTerminal } from "./terminal/create-terminal.js";
import { TmuxClient } from "./tmux/client.js";
import { MachineWorkspaceService } from "./workspace/workspace-service.js";
import { SessionWorktrees } from "./worktrees/session-worktrees.js";

/** What a machine backend needs from its composition root. */
export interface MachineConfig {
  readonly nodeName: string;
  /** `$STARAGENT_HOME`. */
  readonly home: string;
  readonly tmuxSocket: string | undefined;
  /** The server's environment (fallback for CLI processes whose environment cannot be read). */
  readonly env: NodeJS.ProcessEnv;
  readonly log: Logger;
  /** The supported CLIs (default: the built-in ones); tests register modules of their own. */
  readonly agents?: AgentRegistry;
}

/**
 * The services of one machine: what a Node serves, and what the Hub serves for its own machine
 * in-process. Both register them with `machineRoutes`.
 */
export interface MachineServices {
  /** The node id the machine answers as (`local` on a Hub). */
  readonly nodeName: string;
  /** Its sessions: the model over tmux and every operation on them. */
  readonly sessions: Machine;
  /** Chat over its sessions. */
  readonly chat: MachineChat;
  /** Messages queued for its sessions, typed when each is ready. */
  readonly queued: QueuedChat;
  /** Its folders, for picking where a session starts. */
  readonly directories: Directories;
  /** Past conversations in its CLIs' native logs, to resume. */
  readonly conversations: PastConversations;
  /** AnswerPrompt over the machine's sessions, typing under the same per-session lock as chat. */
  readonly prompts: MachinePrompts;
  /** Its terminal attachments. */
  readonly terminal: MachineTerminal;
  /** The machine's tmux client (the same socket for all of the above). */
  readonly tmux: TmuxClient;
  /** `$STARAGENT_HOME`, which workspace reads never enter. */
  readonly home?: string;
  /** Ends every attachment, then the watch loop and its streams; call before closing the server. */
  close(): Promise<void>;
}

/** The services `machineRoutes` registers, for reflection and health. */
export const MACHINE_SERVICES = [SessionService, TerminalStream, WorkspaceService] as const;

/** The one routes function of a machine: SessionService (with chat), TerminalStream and WorkspaceService over it. */
export function machineRoutes(machine: MachineServices): (router: ConnectRouter) => void {
  return (router) => {
    router.service(
      SessionService,
      new MachineSessionService(machine.sessions, machine.chat, machine.prompts, {
        queued: machine.queued,
        directories: machine.directories,
        conversations: machine.conversations,
      }),
    );
    machine.terminal.routes(router);
    router.service(
      WorkspaceService,
      new MachineWorkspaceService(machine.sessions, machine.home, machine.sessions.git.run),
    );
  };
}

/**
 * `$STARAGENT_KEEP_ENDED_HOURS` (a positive number, fractions allowed) in ms: how long an ended
 * session StarAgent created stays listed; unset or not a positive number, the default (a day).
 */
export function keepEndedMs(env: NodeJS.ProcessEnv): number | undefined {
  const hours = Number(env.STARAGENT_KEEP_ENDED_HOURS);
  return env.STARAGENT_KEEP_ENDED_HOURS && Number.isFinite(hours) && hours > 0 ? hours * 3_600_000 : undefined;
}

/** Builds the machine backend (tmux client, state files, status engine, chat, terminal) for one machine. */
export function createMachine(config: MachineConfig): MachineServices {
  // A tmux server this client starts gives its environment to every pane: never the tokens.
  const tmux = new TmuxClient({ socketName: config.tmuxSocket, env: withoutSecrets(config.env) });
  const agents = config.agents ?? createBuiltInAgents();
  const inspector = new StatusEngine({ tmux, agents, nodeEnv: config.env });
  let queued: QueuedChat | undefined;
  const worktrees = new SessionWorktrees(config.home, config.log.child("worktrees"));
  const sessions = new Machine({
    nodeName: config.nodeName,
    tmux,
    state: openStateFiles(config.home, config.log.child("store")),
    inspector,
    log: config.log.child("machine"),
    agents,
    queuedMessages: (key) => queued?.count(key) ?? 0,
    worktrees,
    keepEndedMs: keepEndedMs(config.env),
  });
  const inputLock = newInputLock();
  const chat = new MachineChat({ sessions, tmux, agents, inputLock, log: config.log.child("chat") });
  const prompts = new MachinePrompts({
    sessions,
    tmux,
    agents,
    inputLock,
    audit: new AuditLog(config.home),
    log: config.log.child("prompts"),
  });
  queued = new QueuedChat({
    home: config.home,
    getSession: (name) => sessions.getSession(name),
    watch: (signal) => sessions.watch(signal),
    chat,
    changed: () => sessions.noteChange(),
    log: config.log.child("queue"),
  });
  const started = Promise.all([queued.start(), worktrees.open()]).catch((err: unknown) => {
    config.log.warn("cannot read the queue or the worktree records", { error: `${err}` });
  });
  const conversations = new PastConversations({ agents, env: config.env, openLogs: () => sessions.boundLogs() });
  const directories = new Directories({ userHome: config.env.HOME || homedir(), stateHome: config.home });
  const terminal = createTerminal({ nodeName: config.nodeName, tmux, log: config.log, inputLock });
  let closing: Promise<void> | undefined;
  return {
    nodeName: config.nodeName,
    sessions,
    chat,
    queued,
    directories,
    conversations,
    prompts,
    terminal,
    tmux,
    home: config.home,
    close: () => {
      closing ??= (async () => {
        queued?.close();
        await started;
        await terminal.close();
        await sessions.close();
      })();
      return closing;
    },
  };
}
