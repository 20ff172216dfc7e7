import { claudeDriver } from "./claude-driver.js";
import { defineCompatScenario } from "./compat-scenario.js";

/** The real Claude Code TUI in a Hub's tmux, against the mock Messages API: status and chat at every step. */
defineCompatScenario(claudeDriver);
