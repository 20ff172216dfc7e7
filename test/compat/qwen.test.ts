import { defineCompatScenario } from "./compat-scenario.js";
import { qwenDriver } from "./qwen-driver.js";

/** The real Qwen Code in a Hub's tmux, against the Chat Completions mock: status and chat at every step. */
defineCompatScenario(qwenDriver);
