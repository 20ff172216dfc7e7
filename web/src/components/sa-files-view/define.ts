import "../../workspace/workspace.css";
import "./sa-files-view.css";
import { SaFilesView } from "./sa-files-view.js";

// The Files view, the highlighter, Markdown and the sanitizer live in their own chunk, loaded when the tab opens.
if (!customElements.get("sa-files-view")) customElements.define("sa-files-view", SaFilesView);
