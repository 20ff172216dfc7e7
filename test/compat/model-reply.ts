/** A tool call the scripted model makes: a function name and its JSON arguments. */
export interface ScriptedToolCall {
  readonly name: string;
  readonly arguments: Readonly<Record<string, unknown>>;
}

/**
 * The tokens a scripted reply reports, in each API's own fields: `input` is the whole prompt (cached
 * tokens included), `cached` the part of it read from the prompt cache.
 */
export interface ScriptedUsage {
  readonly input: number;
  readonly cached: number;
  readonly output: number;
}

/** The tokens a reply reports when the test does not script them. */
export const DEFAULT_USAGE: ScriptedUsage = { input: 12, cached: 0, output: 6 };

/** A reply refused with an HTTP error (a plan limit hit): its status, headers and JSON body. */
export interface ScriptedError {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body: unknown;
}

/**
 * One scripted model reply: text, a tool call, or both (text first), or an `error`. `hold` keeps the response open
 * until the test releases it, so "a turn is running" can be observed at leisure: `true` holds after
 * the stream's first event (nothing answered yet), `"mid-text"` after the first words of the text (a
 * reply cut off mid-answer).
 */
export interface ScriptedReply {
  readonly text?: string;
  readonly toolCall?: ScriptedToolCall;
  readonly hold?: boolean | "mid-text";
  /** The tokens the reply reports (DEFAULT_USAGE when absent). */
  readonly usage?: ScriptedUsage;
  /** Extra response headers (a plan's rate-limit windows). */
  readonly headers?: Readonly<Record<string, string>>;
  /** Refuses the request with this error instead of streaming a reply. */
  readonly error?: ScriptedError;
}

/** The text deltas a reply streams: the text cut into a few pieces, like a real model's tokens. */
export function textDeltas(text: string): string[] {
  return text.split(/(?<= )/);
}
