/**
 * The machine backend's entry point: what the Hub (which runs one for its own machine) and the CLI
 * may use. Nothing else of services/node is imported from outside it.
 */
export {
  createMachine,
  MACHINE_SERVICES,
  type MachineConfig,
  type MachineServices,
  machineRoutes,
} from "./create-machine.js";
export { Machine } from "./machine.js";
export { type NodeServerOptions, startNodeServer } from "./node-server.js";
export { MAX_PAGE_SIZE, paginate } from "./pagination.js";
export { parseSessionFilter } from "./session-filter.js";
export { type ChatBackend, MachineSessionService } from "./session-service.js";
export { JsonFile } from "./store/json-file.js";
export { putLaunchSecrets, secretsFile, takeLaunchSecrets } from "./system/launch-secrets.js";
export { runnableService, runSystemCommand } from "./system/system-main.js";
export {
  SYSTEM_SERVICES,
  SystemError,
  type SystemService,
  SystemSessions,
  type SystemState,
  systemSessionName,
} from "./system/system-sessions.js";
export { planTailscaled, probeTailscaledHost, TAILSCALED_INSTALL_HINT } from "./system/tailscaled.js";
export type { MachineTerminal } from "./terminal/create-terminal.js";
export {
  LOCAL_NODE_ID,
  NODE_ID_PATTERN,
  parseParent,
  parseSessionName,
  sessionResourceName,
  validateSessionName,
} from "./tmux/names.js";
