import { DEFAULT_USAGE, type ScriptedReply, type ScriptedUsage, textDeltas } from "./model-reply.js";

/** One server-sent event of the OpenAI Responses streaming API. */
export interface ResponsesEvent {
  readonly type: string;
  readonly [field: string]: unknown;
}

/** A completed response's token counts (Codex shows and stores them). */
function responseUsage(usage: ScriptedUsage) {
  return {
    input_tokens: usage.input,
    input_tokens_details: { cached_tokens: usage.cached },
    output_tokens: usage.output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: usage.input + usage.output,
  };
}

/** The event that opens a response: sent before a held reply waits, so the client sees a live turn. */
export function responseCreated(responseId: string, model: string): ResponsesEvent {
  return {
    type: "response.created",
    response: { id: responseId, object: "response", status: "in_progress", model, output: [] },
  };
}

/**
 * The rest of a Responses stream for one scripted reply, in the order the real API sends it: each
 * output item is added, streamed (text deltas or function-call argument deltas), and done; then
 * `response.completed` with the whole output and usage.
 */
export function responseBody(responseId: string, model: string, reply: ScriptedReply): ResponsesEvent[] {
  const events: ResponsesEvent[] = [];
  const output: unknown[] = [];
  if (reply.text !== undefined) {
    const itemId = `msg_${responseId}`;
    const outputIndex = output.length;
    events.push({
      type: "response.output_item.added",
      output_index: outputIndex,
      item: { type: "message", id: itemId, role: "assistant", status: "in_progress", content: [] },
    });
    events.push({
      type: "response.content_part.added",
      item_id: itemId,
      output_index: outputIndex,
      content_index: 0,
      part: { type: "output_text", text: "", annotations: [] },
    });
    for (const delta of textDeltas(reply.text)) {
      events.push({
        type: "response.output_text.delta",
        item_id: itemId,
        output_index: outputIndex,
        content_index: 0,
        delta,
      });
    }
    events.push({
      type: "response.output_text.done",
      item_id: itemId,
      output_index: outputIndex,
      content_index: 0,
      text: reply.text,
    });
    const item = {
      type: "message",
      id: itemId,
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text: reply.text, annotations: [] }],
    };
    events.push({ type: "response.output_item.done", output_index: outputIndex, item });
    output.push(item);
  }
  if (reply.toolCall !== undefined) {
    const itemId = `fc_${responseId}`;
    const callId = `call_${responseId}`;
    const outputIndex = output.length;
    const args = JSON.stringify(reply.toolCall.arguments);
    events.push({
      type: "response.output_item.added",
      output_index: outputIndex,
      item: {
        type: "function_call",
        id: itemId,
        call_id: callId,
        name: reply.toolCall.name,
        arguments: "",
        status: "in_progress",
      },
    });
    events.push({
      type: "response.function_call_arguments.delta",
      item_id: itemId,
      output_index: outputIndex,
      delta: args,
    });
    events.push({
      type: "response.function_call_arguments.done",
      item_id: itemId,
      output_index: outputIndex,
      arguments: args,
    });
    const item = {
      type: "function_call",
      id: itemId,
      call_id: callId,
      name: reply.toolCall.name,
      arguments: args,
      status: "completed",
    };
    events.push({ type: "response.output_item.done", output_index: outputIndex, item });
    output.push(item);
  }
  events.push({
    type: "response.completed",
    response: {
      id: responseId,
      object: "response",
      status: "completed",
      model,
      output,
      usage: responseUsage(reply.usage ?? DEFAULT_USAGE),
    },
  });
  return events;
}

/** Encodes one event the way the Responses API frames it on the wire. */
export function encodeResponsesEvent(event: ResponsesEvent): string {
  return `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}
