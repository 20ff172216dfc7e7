import { SaApp } from "./components/sa-app/sa-app.js";
import { SaBanner } from "./components/sa-banner/sa-banner.js";
import { SaContextMeter } from "./components/sa-context-meter/sa-context-meter.js";
import { SaLogin } from "./components/sa-login/sa-login.js";
import { SaPromptCard } from "./components/sa-prompt-card/sa-prompt-card.js";
import { SaSessionList } from "./components/sa-session-list/sa-session-list.js";
import { SaToasts } from "./components/sa-toasts/sa-toasts.js";

/**
 * Registers the elements of the first session list (the component modules themselves have no side
 * effects). An open session, the nodes page and the dialogs register from their own chunk
 * (components/define-views.ts), the terminal from another (components/sa-terminal/define.ts), each
 * when first needed (components/lazy-views.ts).
 */
export function defineElements(): void {
  const elements: Array<[string, CustomElementConstructor]> = [
    ["sa-toasts", SaToasts],
    ["sa-banner", SaBanner],
    ["sa-login", SaLogin],
    ["sa-session-list", SaSessionList],
    ["sa-prompt-card", SaPromptCard],
    ["sa-context-meter", SaContextMeter],
    ["sa-app", SaApp],
  ];
  for (const [tag, element] of elements) if (!customElements.get(tag)) customElements.define(tag, element);
}
