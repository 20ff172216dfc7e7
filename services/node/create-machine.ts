import { withoutSecrets } from "../common/config.js";
import type { Logger } from "../common/log.js";
import { type AgentRegistry, createBuiltInAgents } from "./agents/registry.js";
import { MachineChat } from "./chat/machine-chat.js";
import { Machine } from "./machine.js";
import { StatusEngine } from "./status/engine.js";
import { openStateFiles } from "./store/state-files.js";
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

/** Builds the machine backend (tmux client, state files, status engine, chat) for one machine. */
export function createMachine(config: MachineConfig): { machine: Machine; tmux: TmuxClient; chat: MachineChat } {
  // A tmux server this client starts gives its environment to every pane: never the tokens.
  const tmux = new TmuxClient({ socketName: config.tmuxSocket, env: withoutSecrets(config.env) });
  const agents = config.agents ?? createBuiltInAgents();
  const inspector = new StatusEngine({ tmux, agents, nodeEnv: config.env });
  const machine = new Machine({
    nodeName: config.nodeName,
    tmux,
    state: openStateFiles(config.home, config.log.child("store")),
    inspector,
    log: config.log.child("machine"),
    agents,
  });
  const chat = new MachineChat({ machine, tmux, agents, log: config.log.child("chat") });
  return { machine, tmux, chat };
}
