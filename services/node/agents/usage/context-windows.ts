/**
 * Context windows of the models whose CLIs do not record one in their log (Claude Code, opencode), in
 * tokens, pinned as of TABLE_DATE from the model makers' published figures. Codex records its own
 * (`model_context_window`) and never needs this. Matched by prefix on the model name the CLI records,
 * longest prefix first; a model not listed has no window (the UI then shows tokens, not a percentage).
 * Update the date with the table.
 */
export const CONTEXT_WINDOW_TABLE_DATE = "2026-12-01";

/** Prefix of a model name → its context window in tokens. */
const CONTEXT_WINDOWS: readonly (readonly [prefix: string, tokens: number])[] = [
  // Claude: 200k for every current model; the 1M beta is named with a `[1m]` suffix by Claude Code.
  ["claude-opus-4", 200_000],
  ["claude-sonnet-4", 200_000],
  ["claude-haiku-4", 200_000],
  ["claude-3-7-sonnet", 200_000],
  ["claude-3-5-sonnet", 200_000],
  ["claude-3-5-haiku", 200_000],
  // OpenAI models as opencode names them (Codex records its own window).
  ["gpt-5", 400_000],
  ["gpt-4.1", 1_047_576],
  ["gpt-4o", 128_000],
  ["o3", 200_000],
  ["o4-mini", 200_000],
  // Google models as opencode names them.
  ["gemini-2.5", 1_048_576],
];

/** Models named with this suffix run with a one-million-token window (Claude Code's `[1m]`). */
const ONE_MILLION_SUFFIX = "[1m]";
const ONE_MILLION = 1_000_000;

/** The pinned context window of `model` (as the CLI names it, provider prefix allowed), or 0. */
export function tableContextWindow(model: string): number {
  const name = model.toLowerCase().replace(/^.*\//, "");
  if (name.endsWith(ONE_MILLION_SUFFIX)) return ONE_MILLION;
  let best: readonly [string, number] | undefined;
  for (const entry of CONTEXT_WINDOWS) {
    if (name.startsWith(entry[0]) && (!best || entry[0].length > best[0].length)) best = entry;
  }
  return best?.[1] ?? 0;
}
