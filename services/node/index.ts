/**
 * The machine backend's entry point: what the Hub (which runs one for its own machine) may use; the
 * Hub imports nothing else of services/node (make lint's dependency-cruiser rules enforce it). Only
 * the `staragent` entry (services/bin) reaches past it, to run the Node's main.ts and the system
 * commands.
 */
export type { AgentModule } from "./agents/agent.js";
export { AgentRegistry, BUILT_IN_FILTER_NAMES, createBuiltInAgents } from "./agents/registry.js";
export {
  createMachine,
  MACHINE_SERVICES,
  type MachineConfig,
  type MachineServices,
  machineRoutes,
} from "./create-machine.js";
export { Machine } from "./machine.js";
export { type NodeServerOptions, startNodeServer } from "./node-server.js";
export { type ChatBackend, MachineSessionService } from "./session-service.js";
export type { MachineTerminal } from "./terminal/create-terminal.js";
export { MAX_ATTACHMENTS_PER_SESSION } from "./terminal/limits.js";
