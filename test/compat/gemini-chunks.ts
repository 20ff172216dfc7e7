import { type ScriptedReply, textDeltas } from "./model-reply.js";

/**
 * One `GenerateContentResponse` of the Gemini API's `streamGenerateContent?alt=sse` stream, the wire
 * format Gemini CLI speaks (and nothing else): candidates with `content.parts`, a finish reason on the
 * last one, and `usageMetadata`.
 */
export interface GenerateContentChunk {
  readonly candidates: readonly unknown[];
  readonly usageMetadata?: unknown;
  readonly modelVersion: string;
  readonly responseId: string;
}

/** Token counts sent in the final chunk (Gemini CLI records them on its `gemini` log record). */
const MOCK_USAGE = { promptTokenCount: 12, candidatesTokenCount: 6, totalTokenCount: 18 } as const;

/**
 * The first chunk, sent before a held reply waits: an empty text part (the stream is open, nothing is
 * said yet).
 */
export function firstGeminiChunk(responseId: string, model: string): GenerateContentChunk {
  return chunk(responseId, model, [{ text: "" }], undefined);
}

/**
 * The remaining chunks of one scripted reply: the text cut into deltas, then the tool call as one
 * `functionCall` part (Gemini sends a call whole, never streamed in pieces), then the finish reason
 * `STOP` with the usage.
 */
export function restGeminiChunks(responseId: string, model: string, reply: ScriptedReply): GenerateContentChunk[] {
  const chunks: GenerateContentChunk[] = [];
  for (const delta of reply.text === undefined ? [] : textDeltas(reply.text)) {
    chunks.push(chunk(responseId, model, [{ text: delta }], undefined));
  }
  if (reply.toolCall !== undefined) {
    chunks.push(
      chunk(
        responseId,
        model,
        [{ functionCall: { id: `call_${responseId}`, name: reply.toolCall.name, args: reply.toolCall.arguments } }],
        undefined,
      ),
    );
  }
  chunks.push({ ...chunk(responseId, model, [{ text: "" }], "STOP"), usageMetadata: MOCK_USAGE });
  return chunks;
}

/** True when a chunk carries words of the reply (not the empty opening or closing part). */
export function geminiChunkHasText(value: GenerateContentChunk): boolean {
  return (
    JSON.stringify(value.candidates).includes('"text":"') && !JSON.stringify(value.candidates).includes('"text":""')
  );
}

/** Encodes one chunk as an SSE `data:` event (the stream has no end marker: the response ends). */
export function encodeGeminiChunk(value: GenerateContentChunk): string {
  return `data: ${JSON.stringify(value)}\r\n\r\n`;
}

function chunk(
  responseId: string,
  model: string,
  parts: readonly unknown[],
  finishReason: string | undefined,
): GenerateContentChunk {
  return {
    candidates: [{ content: { role: "model", parts }, index: 0, ...(finishReason ? { finishReason } : {}) }],
    modelVersion: model,
    responseId,
  };
}
