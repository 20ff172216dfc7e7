import { DEFAULT_USAGE, type ScriptedReply, type ScriptedUsage, textDeltas } from "./model-reply.js";

/** One `chat.completion.chunk` of the Chat Completions streaming API. */
export interface ChatCompletionChunk {
  readonly id: string;
  readonly object: "chat.completion.chunk";
  readonly created: number;
  readonly model: string;
  readonly choices: readonly unknown[];
  readonly usage?: unknown;
}

/** Token counts sent in the final chunk (opencode records them on the assistant message). */
function chunkUsage(usage: ScriptedUsage) {
  return {
    prompt_tokens: usage.input,
    completion_tokens: usage.output,
    total_tokens: usage.input + usage.output,
    prompt_tokens_details: { cached_tokens: usage.cached },
  };
}

/** The first chunk: the assistant role with no content yet; sent before a held reply waits. */
export function firstChunk(completionId: string, model: string): ChatCompletionChunk {
  return chunk(completionId, model, [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }]);
}

/**
 * The remaining chunks for one scripted reply: content deltas, then one tool call streamed as its
 * header and its arguments, then the finish reason (`tool_calls` or `stop`) and a usage chunk.
 */
export function restChunks(completionId: string, model: string, reply: ScriptedReply): ChatCompletionChunk[] {
  const chunks: ChatCompletionChunk[] = [];
  if (reply.text !== undefined) {
    for (const delta of textDeltas(reply.text)) {
      chunks.push(chunk(completionId, model, [{ index: 0, delta: { content: delta }, finish_reason: null }]));
    }
  }
  if (reply.toolCall !== undefined) {
    const callId = `call_${completionId}`;
    chunks.push(
      chunk(completionId, model, [
        {
          index: 0,
          delta: {
            tool_calls: [
              { index: 0, id: callId, type: "function", function: { name: reply.toolCall.name, arguments: "" } },
            ],
          },
          finish_reason: null,
        },
      ]),
    );
    chunks.push(
      chunk(completionId, model, [
        {
          index: 0,
          delta: { tool_calls: [{ index: 0, function: { arguments: JSON.stringify(reply.toolCall.arguments) } }] },
          finish_reason: null,
        },
      ]),
    );
  }
  const finish = reply.toolCall !== undefined ? "tool_calls" : "stop";
  chunks.push(chunk(completionId, model, [{ index: 0, delta: {}, finish_reason: finish }]));
  chunks.push({ ...chunk(completionId, model, []), usage: chunkUsage(reply.usage ?? DEFAULT_USAGE) });
  return chunks;
}

/** Encodes one chunk as an SSE `data:` line. */
export function encodeChunk(value: ChatCompletionChunk): string {
  return `data: ${JSON.stringify(value)}\n\n`;
}

/** The line that ends every Chat Completions stream. */
export const STREAM_DONE = "data: [DONE]\n\n";

function chunk(id: string, model: string, choices: readonly unknown[]): ChatCompletionChunk {
  return { id, object: "chat.completion.chunk", created: Math.floor(Date.now() / 1000), model, choices };
}
