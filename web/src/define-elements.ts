import { SaAdoptDialog } from "./components/sa-adopt-dialog/sa-adopt-dialog.js";
import { SaApp } from "./components/sa-app/sa-app.js";
import { SaBanner } from "./components/sa-banner/sa-banner.js";
import { SaChatComposer } from "./components/sa-chat-composer/sa-chat-composer.js";
import { SaChatQueue } from "./components/sa-chat-queue/sa-chat-queue.js";
import { SaChatView } from "./components/sa-chat-view/sa-chat-view.js";
import { SaContextMeter } from "./components/sa-context-meter/sa-context-meter.js";
import { SaCreateDialog } from "./components/sa-create-dialog/sa-create-dialog.js";
import { SaLogin } from "./components/sa-login/sa-login.js";
import { SaNodeEdit } from "./components/sa-node-edit/sa-node-edit.js";
import { SaNodeList } from "./components/sa-node-list/sa-node-list.js";
import { SaPlanLimits } from "./components/sa-plan-limits/sa-plan-limits.js";
import { SaPromptCard } from "./components/sa-prompt-card/sa-prompt-card.js";
import { SaSessionList } from "./components/sa-session-list/sa-session-list.js";
import { SaSessionView } from "./components/sa-session-view/sa-session-view.js";
import { SaStopDialog } from "./components/sa-stop-dialog/sa-stop-dialog.js";
import { SaToasts } from "./components/sa-toasts/sa-toasts.js";
import { SaTurnBar } from "./components/sa-turn-bar/sa-turn-bar.js";
import { SaUsagePanel } from "./components/sa-usage-panel/sa-usage-panel.js";
import { SaWebhooksDialog } from "./components/sa-webhooks-dialog/sa-webhooks-dialog.js";
import { SaWorkspacePanel } from "./components/sa-workspace-tabs/sa-workspace-tabs.js";

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
    ["sa-chat-queue", SaChatQueue],
    ["sa-prompt-card", SaPromptCard],
    ["sa-create-dialog", SaCreateDialog],
    ["sa-adopt-dialog", SaAdoptDialog],
    ["sa-webhooks-dialog", SaWebhooksDialog],
    ["sa-stop-dialog", SaStopDialog],
    ["sa-node-edit", SaNodeEdit],
    ["sa-node-list", SaNodeList],
    ["sa-workspace-panel", SaWorkspacePanel],
    ["sa-context-meter", SaContextMeter],
    ["sa-turn-bar", SaTurnBar],
    ["sa-usage-panel", SaUsagePanel],
    ["sa-plan-limits", SaPlanLimits],
    ["sa-app", SaApp],
  ];
  for (const [tag, element] of elements) if (!customElements.get(tag)) customElements.define(tag, element);
}
