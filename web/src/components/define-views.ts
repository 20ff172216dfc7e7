import "./sa-session-view/sa-session-view.css";
import "./sa-usage-panel/sa-usage-panel.css";
import "./sa-plan-limits/sa-plan-limits.css";
import "./sa-chat-view/sa-chat-view.css";
import "./sa-turn-bar/sa-turn-bar.css";
import "./sa-chat-composer/sa-chat-composer.css";
import "./sa-chat-queue/sa-chat-queue.css";
import "./sa-create-dialog/sa-create-dialog.css";
import "./sa-adopt-dialog/sa-adopt-dialog.css";
import "./sa-webhooks-dialog/sa-webhooks-dialog.css";
import "./sa-stop-dialog/sa-stop-dialog.css";
import "./sa-node-list/sa-node-list.css";
import "./sa-node-edit/sa-node-edit.css";
import { SaAdoptDialog } from "./sa-adopt-dialog/sa-adopt-dialog.js";
import { SaChatComposer } from "./sa-chat-composer/sa-chat-composer.js";
import { SaChatQueue } from "./sa-chat-queue/sa-chat-queue.js";
import { SaChatView } from "./sa-chat-view/sa-chat-view.js";
import { SaCreateDialog } from "./sa-create-dialog/sa-create-dialog.js";
import { SaNodeEdit } from "./sa-node-edit/sa-node-edit.js";
import { SaNodeList } from "./sa-node-list/sa-node-list.js";
import { SaPlanLimits } from "./sa-plan-limits/sa-plan-limits.js";
import { SaSessionView } from "./sa-session-view/sa-session-view.js";
import { SaStopDialog } from "./sa-stop-dialog/sa-stop-dialog.js";
import { SaTurnBar } from "./sa-turn-bar/sa-turn-bar.js";
import { SaUsagePanel } from "./sa-usage-panel/sa-usage-panel.js";
import { SaWebhooksDialog } from "./sa-webhooks-dialog/sa-webhooks-dialog.js";
import { SaWorkspacePanel } from "./sa-workspace-tabs/sa-workspace-tabs.js";

// What the first session list does not show (an open session, the nodes page, the dialogs) lives in a
// chunk of its own, loaded when first needed and warmed once the list is on screen (lazy-views.ts).
const elements: Array<[string, CustomElementConstructor]> = [
  ["sa-session-view", SaSessionView],
  ["sa-chat-view", SaChatView],
  ["sa-chat-composer", SaChatComposer],
  ["sa-chat-queue", SaChatQueue],
  ["sa-turn-bar", SaTurnBar],
  ["sa-usage-panel", SaUsagePanel],
  ["sa-workspace-panel", SaWorkspacePanel],
  ["sa-create-dialog", SaCreateDialog],
  ["sa-adopt-dialog", SaAdoptDialog],
  ["sa-webhooks-dialog", SaWebhooksDialog],
  ["sa-stop-dialog", SaStopDialog],
  ["sa-node-list", SaNodeList],
  ["sa-node-edit", SaNodeEdit],
  ["sa-plan-limits", SaPlanLimits],
];
for (const [tag, element] of elements) if (!customElements.get(tag)) customElements.define(tag, element);
