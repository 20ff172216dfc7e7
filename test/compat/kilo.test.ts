import { defineCompatScenario } from "./compat-scenario.js";
import { kiloDriver } from "./kilo-driver.js";

/** The real Kilo CLI TUI in a Hub's tmux, against the mock model: status and chat at every step. */
defineCompatScenario(kiloDriver);
