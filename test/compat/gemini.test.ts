import { defineCompatScenario } from "./compat-scenario.js";
import { geminiDriver } from "./gemini-driver.js";

/** The real Gemini CLI in a Hub's tmux, against the Gemini-format mock: status and chat at every step. */
defineCompatScenario(geminiDriver);
