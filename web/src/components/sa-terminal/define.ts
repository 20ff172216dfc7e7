import "../sa-quick-keys/sa-quick-keys.css";
import "./sa-terminal.css";
import "../sa-osc52-prompt/sa-osc52-prompt.css";
import { SaOsc52Prompt } from "../sa-osc52-prompt/sa-osc52-prompt.js";
import { SaQuickKeys } from "../sa-quick-keys/sa-quick-keys.js";
import { SaTerminal } from "./sa-terminal.js";

// The terminal and its quick keys live in their own chunk, loaded when a session is first opened.
if (!customElements.get("sa-terminal")) customElements.define("sa-terminal", SaTerminal);
if (!customElements.get("sa-quick-keys")) customElements.define("sa-quick-keys", SaQuickKeys);
if (!customElements.get("sa-osc52-prompt")) customElements.define("sa-osc52-prompt", SaOsc52Prompt);
