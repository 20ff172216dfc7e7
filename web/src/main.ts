import "./styles/theme.css";
import "./styles/base.css";
import "./components/sa-app/sa-app.css";
import "./components/sa-login/sa-login.css";
import "./components/sa-banner/sa-banner.css";
import "./components/sa-toasts/sa-toasts.css";
import "./components/sa-session-list/sa-session-list.css";
import "./components/sa-session-view/sa-session-view.css";
import "./components/sa-chat-view/sa-chat-view.css";
import "./components/sa-chat-composer/sa-chat-composer.css";
import "./components/sa-create-dialog/sa-create-dialog.css";
import "./components/sa-adopt-dialog/sa-adopt-dialog.css";
import "./components/sa-stop-dialog/sa-stop-dialog.css";
import "./components/sa-node-list/sa-node-list.css";
import { defineElements } from "./define-elements.js";

defineElements();
