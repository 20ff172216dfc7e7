import { DEFAULT_USAGE, type ScriptedReply, type ScriptedUsage, textDeltas } from "./model-reply.js";

/** One server-sent event of the Anthropic Messages streaming API. */
export interface MessagesEvent {
  readonly type: string;
  readonly [field: string]: unknown;
}

/**
 * The token counts `message_start` reports (Claude Code shows and stores them): the prompt split
 * into uncached input and cache reads, and a first output token; `message_delta` gives the output.
 */
function startUsage(usage: ScriptedUsage) {
  return {
    input_tokens: usage.input - usage.cached,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: usage.cached,
    output_tokens: 1,
  };
}

/** The event that opens a message: sent before a held reply waits, so the client sees a live turn. */
export function messageStart(messageId: string, model: string, usage: ScriptedUsage = DEFAULT_USAGE): MessagesEvent {
  return {
    type: "message_start",
    message: {
      id: messageId,
      type: "message",
      role: "assistant",
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: startUsage(usage),
    },
  };
}

/**
 * The rest of a Messages stream for one scripted reply, in the order the real API sends it: each
 * content block is started, streamed (text deltas or `input_json_delta` pieces) and stopped; then
 * `message_delta` with the stop reason (`tool_use` or `end_turn`) and `message_stop`.
 */
export function messageBody(messageId: string, reply: ScriptedReply): MessagesEvent[] {
  const events: MessagesEvent[] = [];
  let index = 0;
  if (reply.text !== undefined) {
    events.push({ type: "content_block_start", index, content_block: { type: "text", text: "" } });
    for (const text of textDeltas(reply.text)) {
      events.push({ type: "content_block_delta", index, delta: { type: "text_delta", text } });
    }
    events.push({ type: "content_block_stop", index });
    index++;
  }
  if (reply.toolCall !== undefined) {
    const id = `toolu_${messageId.replace(/^msg_/, "")}`;
    events.push({
      type: "content_block_start",
      index,
      content_block: { type: "tool_use", id, name: reply.toolCall.name, input: {} },
    });
    events.push({
      type: "content_block_delta",
      index,
      delta: { type: "input_json_delta", partial_json: JSON.stringify(reply.toolCall.arguments) },
    });
    events.push({ type: "content_block_stop", index });
  }
  events.push({
    type: "message_delta",
    delta: { stop_reason: reply.toolCall !== undefined ? "tool_use" : "end_turn", stop_sequence: null },
    usage: { output_tokens: (reply.usage ?? DEFAULT_USAGE).output },
  });
  events.push({ type: "message_stop" });
  return events;
}

/** Encodes one event the way the Messages API frames it on the wire. */
export function encodeMessagesEvent(event: MessagesEvent): string {
  return `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}
