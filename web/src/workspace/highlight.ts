import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import c from "highlight.js/lib/languages/c";
import cpp from "highlight.js/lib/languages/cpp";
import css from "highlight.js/lib/languages/css";
import go from "highlight.js/lib/languages/go";
import java from "highlight.js/lib/languages/java";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import markdown from "highlight.js/lib/languages/markdown";
import python from "highlight.js/lib/languages/python";
import ruby from "highlight.js/lib/languages/ruby";
import rust from "highlight.js/lib/languages/rust";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import yaml from "highlight.js/lib/languages/yaml";

/**
 * Syntax highlighting for the Changes and Files views (highlight.js, loaded with those views only).
 * highlight.js escapes the text it is given and adds only its own `<span class="hljs-…">` markup, so
 * its output may be inserted as HTML; everything else in these views is inserted as text.
 */
const LANGUAGES = {
  bash,
  c,
  cpp,
  css,
  go,
  java,
  javascript,
  json,
  markdown,
  python,
  ruby,
  rust,
  typescript,
  xml,
  yaml,
};
for (const [name, language] of Object.entries(LANGUAGES)) hljs.registerLanguage(name, language);

/** Languages by file extension (highlight.js names). */
const BY_EXTENSION: Readonly<Record<string, string>> = {
  ts: "typescript",
  tsx: "typescript",
  mts: "typescript",
  cts: "typescript",
  js: "javascript",
  jsx: "javascript",
  mjs: "javascript",
  cjs: "javascript",
  py: "python",
  go: "go",
  rs: "rust",
  rb: "ruby",
  java: "java",
  c: "c",
  h: "c",
  cc: "cpp",
  cpp: "cpp",
  hpp: "cpp",
  css: "css",
  json: "json",
  md: "markdown",
  markdown: "markdown",
  html: "xml",
  xml: "xml",
  svg: "xml",
  yml: "yaml",
  yaml: "yaml",
  sh: "bash",
  bash: "bash",
};

/** Lines longer than this are shown plain (highlighting a minified line is slow and useless). */
const MAX_HIGHLIGHT_CHARS = 2_000;

/** The language of a file from its name, or undefined (shown plain). */
export function languageFor(path: string): string | undefined {
  const ext = /\.([A-Za-z0-9]+)$/.exec(path)?.[1]?.toLowerCase();
  return ext ? BY_EXTENSION[ext] : undefined;
}

/** One line as highlighted HTML (escaped by highlight.js), or undefined when it stays plain text. */
export function highlightLine(text: string, language: string | undefined): string | undefined {
  if (!language || text.length > MAX_HIGHLIGHT_CHARS) return undefined;
  return hljs.highlight(text, { language, ignoreIllegals: true }).value;
}
