import type { AgentModule } from "./agent.js";
import { ClaudeModule } from "./claude/claude-module.js";
import { CodexModule } from "./codex/codex-module.js";
import { OpencodeModule } from "./opencode/opencode-module.js";

/**
 * A fresh set of the supported agent CLIs, in the order they are tried on a pane's processes. Each
 * module caches what it read (logs, bindings, database connections), so every machine gets its own.
 */
export function createAgentModules(): AgentModule[] {
  return [new ClaudeModule(), new CodexModule(), new OpencodeModule()];
}

/** The supported agent CLIs of this process's machine backend. */
export const AGENT_MODULES: readonly AgentModule[] = createAgentModules();
