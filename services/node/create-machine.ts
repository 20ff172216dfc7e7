import { withoutSecrets } from "../common/config.js";
import type { Logger } from "../common/log.js";
import { AGENT_MODULES } from "./agents/index.js";
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
}

/** Builds the machine backend (tmux client, state files, status engine, chat) for one machine. */
export function createMachine(config: MachineConfig): { machine: Machine; tmux: TmuxClient; chat: MachineChat } {
  // A tmux server this client starts gives its environment to every pane: never the tokens.
  const tmux = new TmuxClient({ socketName: config.tmuxSocket, env: withoutSecrets(config.env) });
  const inspector = new StatusEngine({ tmux, agents: AGENT_MODULES, nodeEnv: config.env });
  const machine = new Machine({
    nodeName: config.nodeName,
    tmux,
    state: openStateFiles(config.home, config.log.child("store")),
    inspector,
    log: config.log.child("machine"),
  });
  const chat = new MachineChat({ machine, tmux, log: config.log.child("chat") });
  return { machine, tmux, chat };
}
