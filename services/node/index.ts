/**
 * The machine backend's entry point: what the Hub (which runs one for its own machine) may use.
 * Nothing else of services/node is imported from outside it (scripts/check-imports.mjs enforces it).
 */
export { createMachine, type MachineConfig } from "./create-machine.js";
export { Machine } from "./machine.js";
export { type NodeServerOptions, nodeRoutes, startNodeServer } from "./node-server.js";
export { type ChatBackend, MachineSessionService } from "./session-service.js";
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
export { createTerminal, type MachineTerminal, type TerminalConfig } from "./terminal/create-terminal.js";
export { MAX_ATTACHMENTS_PER_SESSION } from "./terminal/limits.js";
