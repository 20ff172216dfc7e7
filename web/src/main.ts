import "./styles/theme.css";
import "./styles/base.css";
import "./components/sa-app/sa-app.css";
import "./components/sa-login/sa-login.css";
import "./components/sa-banner/sa-banner.css";
import "./components/sa-prompt-card/sa-prompt-card.css";
import "./components/sa-toasts/sa-toasts.css";
import "./components/sa-session-list/sa-session-list.css";
import "./components/sa-context-meter/sa-context-meter.css";
import { defineElements } from "./define-elements.js";

defineElements();
