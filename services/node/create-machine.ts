import type { ConnectRouter } from "@connectrpc/connect";
import { SessionService } from "../../gen/staragent/v1/session_service_pb.js";
import { TerminalStream } from "../../gen/staragent/v1/terminal_stream_pb.js";
import { withoutSecrets } from "../common/config.js";
import type { Logger } from "../common/log.js";
import { type AgentRegistry, createBuiltInAgents } from "./agents/registry.js";
import { MachineChat } from "./chat/machine-chat.js";
import { Machine } from "./machine.js";
import { MachineSessionService } from "./session-service.js";
import { StatusEngine } from "./status/engine.js";
import { openStateFiles } from "./store/state-files.js";
import { createTerminal, type MachineTerminal } from "./terminal/create-terminal.js";
import { TmuxClient } from "./tmux/client.js";

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
  /** Its terminal attachments. */
  readonly terminal: MachineTerminal;
  /** The machine's tmux client (the same socket for all of the above). */
  readonly tmux: TmuxClient;
  /** Ends every attachment, then the watch loop and its streams; call before closing the server. */
  close(): Promise<void>;
}

/** The services `machineRoutes` registers, for reflection and health. */
export const MACHINE_SERVICES = [SessionService, TerminalStream] as const;

/** The one routes function of a machine: SessionService (with chat) and TerminalStream over it. */
export function machineRoutes(machine: MachineServices): (router: ConnectRouter) => void {
  return (router) => {
    router.service(SessionService, new MachineSessionService(machine.sessions, machine.chat));
    machine.terminal.routes(router);
  };
}

/** Builds the machine backend (tmux client, state files, status engine, chat, terminal) for one machine. */
export function createMachine(config: MachineConfig): MachineServices {
  // A tmux server this client starts gives its environment to every pane: never the tokens.
  const tmux = new TmuxClient({ socketName: config.tmuxSocket, env: withoutSecrets(config.env) });
  const agents = config.agents ?? createBuiltInAgents();
  const inspector = new StatusEngine({ tmux, agents, nodeEnv: config.env });
  const sessions = new Machine({
    nodeName: config.nodeName,
    tmux,
    state: openStateFiles(config.home, config.log.child("store")),
    inspector,
    log: config.log.child("machine"),
    agents,
  });
  const chat = new MachineChat({ sessions, tmux, agents, log: config.log.child("chat") });
  const terminal = createTerminal({ nodeName: config.nodeName, tmux, log: config.log });
  let closing: Promise<void> | undefined;
  return {
    nodeName: config.nodeName,
    sessions,
    chat,
    terminal,
    tmux,
    close: () => {
      closing ??= (async () => {
        await terminal.close();
        await sessions.close();
      })();
      return closing;
    },
  };
}
