import { type ScriptedReply, textDeltas } from "./model-reply.js";

/** One server-sent event of the Anthropic Messages streaming API. */
export interface MessagesEvent {
  readonly type: string;
  readonly [field: string]: unknown;
}

/** Token counts reported with every message (Claude Code shows and stores them). */
const MOCK_USAGE = {
  input_tokens: 12,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
  output_tokens: 1,
} as const;

/** The event that opens a message: sent before a held reply waits, so the client sees a live turn. */
export function messageStart(messageId: string, model: string): MessagesEvent {
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
      usage: MOCK_USAGE,
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
    usage: { output_tokens: 6 },
  });
  events.push({ type: "message_stop" });
  return events;
}

/** Encodes one event the way the Messages API frames it on the wire. */
export function encodeMessagesEvent(event: MessagesEvent): string {
  return `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}
