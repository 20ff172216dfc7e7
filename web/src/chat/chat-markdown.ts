import "../workspace/workspace.css";
import "./chat-markdown.css";
import { renderMarkdown } from "../util/markdown.js";
import { highlightLine, languageFor } from "../workspace/highlight.js";

/**
 * An agent's answer (as its CLI logged it, Markdown) as HTML safe to insert: lists, tables, links and
 * fenced code highlighted by the fence's language (`ts`, `python`, …; unknown ones shown plain). Loaded
 * with the first answer shown, in its own chunk with marked, DOMPurify and highlight.js, so opening
 * the dashboard does not fetch them.
 */
export function chatMarkdown(text: string): string {
  return renderMarkdown(text, highlightCode);
}

/** A fenced block's code highlighted line by line, or undefined when the language is not one we load. */
function highlightCode(code: string, fence: string): string | undefined {
  const language = languageFor(`block.${fence}`) ?? fence.toLowerCase();
  try {
    const lines = code.split("\n").map((line) => highlightLine(line, language));
    if (lines.some((l) => l === undefined)) return undefined;
    return lines.join("\n");
  } catch {
    // A language highlight.js was not given (it throws): the block stays plain, escaped by marked.
    return undefined;
  }
}
