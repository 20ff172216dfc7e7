import DOMPurify from "dompurify";
import { Marked } from "marked";

/** How a fenced block's code becomes HTML: escaped, highlighted markup, or undefined for marked's own. */
export type CodeHighlighter = (code: string, language: string) => string | undefined;

/** Tags left out even when harmless to the page: they would let text dress up as the dashboard's controls. */
const FORBID_TAGS = ["style", "form", "input", "button"];

/**
 * Markdown from untrusted text (a file, an agent's answer) as HTML safe to insert: marked renders it
 * (GitHub's flavour: tables, fences, autolinks), DOMPurify removes scripts, event handlers,
 * `javascript:` links and everything else that could run; links open in a new tab without the page
 * as their opener. `highlight` turns a fenced block's code into escaped markup (highlight.js).
 */
export function renderMarkdown(text: string, highlight?: CodeHighlighter): string {
  const marked = new Marked({ gfm: true, async: false });
  if (highlight) {
    marked.use({
      renderer: {
        code({ text: code, lang }) {
          const language = (lang ?? "").trim().split(/\s+/)[0] ?? "";
          const highlighted = language === "" ? undefined : highlight(code, language);
          // false: marked's own rendering (escaped text in <pre><code>).
          if (highlighted === undefined) return false;
          return `<pre><code class="hljs" data-language="${language.replace(/[^\w+#.-]/g, "")}">${highlighted}</code></pre>\n`;
        },
      },
    });
  }
  const html = marked.parse(text) as string;
  const clean = DOMPurify.sanitize(html, { FORBID_TAGS, FORBID_ATTR: ["style"] });
  const template = document.createElement("template");
  template.innerHTML = clean;
  for (const a of template.content.querySelectorAll("a")) {
    a.setAttribute("target", "_blank");
    a.setAttribute("rel", "noopener noreferrer");
  }
  return template.innerHTML;
}
