import { html, type TemplateResult } from "lit";

/** http(s) URLs in running text, stopping before spaces, quotes, brackets and trailing punctuation. */
const URL_PATTERN = /\bhttps?:\/\/[^\s<>"'`)\]}]+[^\s<>"'`)\]}.,;:!?]/g;

/**
 * Text with its http(s) URLs as links that open in a new tab without access to this page. Everything is
 * bound as text: agent output can never become markup, and no other scheme (javascript:, data:, file:)
 * becomes a link.
 */
export function linkify(text: string): Array<string | TemplateResult> {
  const out: Array<string | TemplateResult> = [];
  let last = 0;
  for (const match of text.matchAll(URL_PATTERN)) {
    const start = match.index ?? 0;
    const url = match[0];
    let parsed: URL | undefined;
    try {
      parsed = new URL(url);
    } catch {
      parsed = undefined;
    }
    if (!parsed || (parsed.protocol !== "http:" && parsed.protocol !== "https:")) continue;
    if (start > last) out.push(text.slice(last, start));
    out.push(html`<a href=${parsed.href} target="_blank" rel="noopener noreferrer">${url}</a>`);
    last = start + url.length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}
