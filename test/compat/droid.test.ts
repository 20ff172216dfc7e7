import { defineCompatScenario } from "./compat-scenario.js";
import { droidDriver } from "./droid-driver.js";

/** The real Factory droid TUI in a Hub's tmux, against the Chat Completions mock: status and chat at every step. */
defineCompatScenario(droidDriver);
