import "../../workspace/workspace.css";
import "./sa-changes-view.css";
import { SaChangesView } from "./sa-changes-view.js";

// The Changes view, its diff model and the highlighter live in their own chunk, loaded when the tab opens.
if (!customElements.get("sa-changes-view")) customElements.define("sa-changes-view", SaChangesView);
