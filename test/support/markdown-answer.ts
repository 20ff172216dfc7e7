/**
 * An agent's answer with prose, a fenced `ts` block, a list and a table: what compat's mock model sends
 * Claude Code (test/compat/claude-driver.ts) and what its transcript then holds, so the merge test over
 * the screen compat captured (services/node/chat/chat-merge.test.ts) pairs it with the same text.
 */
export const MARKDOWN_ANSWER = [
  "Compat-markdown answer: here is the helper.",
  "",
  "```ts",
  "export function add(a: number, b: number): number {",
  "  return a + b;",
  "}",
  "```",
  "",
  "- It adds **two** numbers",
  "- It returns `a + b`",
  "",
  "| Input | Output |",
  "| ----- | ------ |",
  "| 1, 2  | 3      |",
  "",
  "That is all of it.",
].join("\n");
