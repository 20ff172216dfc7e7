import { defineCompatScenario } from "./compat-scenario.js";
import { copilotDriver } from "./copilot-driver.js";

/** The real GitHub Copilot CLI TUI in a Hub's tmux, against the mock model: status and chat at every step. */
defineCompatScenario(copilotDriver);
