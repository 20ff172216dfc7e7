import type { ConnectRouter } from "@connectrpc/connect";
import { TerminalStream } from "../../../gen/staragent/v1/terminal_stream_pb.js";
import type { KeyedLock } from "../../common/keyed-lock.js";
import type { Logger } from "../../common/log.js";
import type { TmuxClient } from "../tmux/client.js";
import { AttachmentManager } from "./attachment-manager.js";
import { NodeTerminalService } from "./terminal-service.js";

/** What a machine's terminal is built from. */
export interface TerminalConfig {
  /** The node id the machine answers as (`local` on a Hub). */
  readonly nodeName: string;
  /** The machine's tmux client (the same socket as its Machine). */
  readonly tmux: TmuxClient;
  readonly log: Logger;
  /**
   * The machine's per-session input lock (chat sends and prompt answers hold it while they type):
   * every keystroke takes it, so terminal input never lands inside a half-typed message or answer.
   */
  readonly inputLock?: KeyedLock;
}

/** A machine's terminal: its TerminalStream routes and the attachments behind them. */
export interface MachineTerminal {
  /** Registers TerminalStream (part of `machineRoutes`, for a Node and for the Hub's own machine). */
  readonly routes: (router: ConnectRouter) => void;
  /** The services `routes` registers, for reflection and health. */
  readonly services: [typeof TerminalStream];
  readonly manager: AttachmentManager;
  /**
   * Ends every attachment (viewers get `exited` "server stopping") and refuses new ones; call it
   * before closing the server so streams end cleanly and no pty or tmux client outlives it.
   */
  close(): Promise<void>;
}

/** Builds the terminal of one machine (docs/terminal.md). */
export function createTerminal(config: TerminalConfig): MachineTerminal {
  const log = config.log.child("terminal");
  const manager = new AttachmentManager({
    tmux: config.tmux,
    log,
    ...(config.inputLock ? { inputLock: config.inputLock } : {}),
  });
  const service = new NodeTerminalService({ nodeName: config.nodeName, manager, tmux: config.tmux, log });
  return {
    routes: (router) => {
      router.service(TerminalStream, service);
    },
    services: [TerminalStream],
    manager,
    close: () => manager.close(),
  };
}
