import { defineCompatScenario } from "./compat-scenario.js";
import { piDriver } from "./pi-driver.js";

/** The real pi TUI in a Hub's tmux, against the mock model: status and chat at every step. */
defineCompatScenario(piDriver);
