import type { AgentModule } from "./agent.js";

/** The supported agent CLIs, in the order they are tried on a pane's processes. */
export const AGENT_MODULES: readonly AgentModule[] = [];
