import { SaAdoptDialog } from "./components/sa-adopt-dialog/sa-adopt-dialog.js";
import { SaApp } from "./components/sa-app/sa-app.js";
import { SaBanner } from "./components/sa-banner/sa-banner.js";
import { SaChatComposer } from "./components/sa-chat-composer/sa-chat-composer.js";
import { SaChatView } from "./components/sa-chat-view/sa-chat-view.js";
import { SaCreateDialog } from "./components/sa-create-dialog/sa-create-dialog.js";
import { SaLogin } from "./components/sa-login/sa-login.js";
import { SaNodeList } from "./components/sa-node-list/sa-node-list.js";
import { SaSessionList } from "./components/sa-session-list/sa-session-list.js";
import { SaSessionView } from "./components/sa-session-view/sa-session-view.js";
import { SaStopDialog } from "./components/sa-stop-dialog/sa-stop-dialog.js";
import { SaToasts } from "./components/sa-toasts/sa-toasts.js";

/**
 * Registers the dashboard's elements (the component modules themselves have no side effects). The
 * terminal registers itself from its own chunk (components/sa-terminal/define.ts) when first needed.
 */
export function defineElements(): void {
  const elements: Array<[string, CustomElementConstructor]> = [
    ["sa-toasts", SaToasts],
    ["sa-banner", SaBanner],
    ["sa-login", SaLogin],
    ["sa-session-list", SaSessionList],
    ["sa-session-view", SaSessionView],
    ["sa-chat-view", SaChatView],
    ["sa-chat-composer", SaChatComposer],
    ["sa-create-dialog", SaCreateDialog],
    ["sa-adopt-dialog", SaAdoptDialog],
    ["sa-stop-dialog", SaStopDialog],
    ["sa-node-list", SaNodeList],
    ["sa-app", SaApp],
  ];
  for (const [tag, element] of elements) if (!customElements.get(tag)) customElements.define(tag, element);
}
