/** A tool call the scripted model makes: a function name and its JSON arguments. */
export interface ScriptedToolCall {
  readonly name: string;
  readonly arguments: Readonly<Record<string, unknown>>;
}

/**
 * One scripted model reply: text, a tool call, or both (text first). `hold` keeps the response open
 * until the test releases it, so "a turn is running" can be observed at leisure: `true` holds after
 * the stream's first event (nothing answered yet), `"mid-text"` after the first words of the text (a
 * reply cut off mid-answer).
 */
export interface ScriptedReply {
  readonly text?: string;
  readonly toolCall?: ScriptedToolCall;
  readonly hold?: boolean | "mid-text";
}

/** The text deltas a reply streams: the text cut into a few pieces, like a real model's tokens. */
export function textDeltas(text: string): string[] {
  return text.split(/(?<= )/);
}
