import { defineCompatScenario } from "./compat-scenario.js";
import { opencodeDriver } from "./opencode-driver.js";

/** The real opencode TUI in a Hub's tmux, against the mock model: status and chat at every step. */
defineCompatScenario(opencodeDriver);
