import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import {
  type ChatCompletionChunk,
  encodeChunk,
  firstChunk,
  restChunks,
  STREAM_DONE,
} from "./chat-completions-chunks.js";
import { encodeGeminiChunk, firstGeminiChunk, geminiChunkHasText, restGeminiChunks } from "./gemini-chunks.js";
import { encodeMessagesEvent, messageBody, messageStart } from "./messages-events.js";
import type { ScriptedReply } from "./model-reply.js";
import { encodeResponsesEvent, responseBody, responseCreated } from "./responses-events.js";

/**
 * Which model API a request used: OpenAI Responses (Codex), Chat Completions (opencode, Qwen Code),
 * Anthropic Messages (Claude Code), Gemini `streamGenerateContent` (Gemini CLI).
 */
export type ModelApi = "responses" | "chat-completions" | "messages" | "gemini" | "other";

/** One HTTP request the CLI sent to the mock, kept so tests can assert what was asked. */
export interface RecordedRequest {
  readonly api: ModelApi;
  readonly method: string;
  readonly path: string;
  readonly body: unknown;
  readonly receivedAt: number;
}

/** How a scripted reply ended: streamed to the end, or cut off because the client went away. */
export type ReplyOutcome = "completed" | "aborted";

/** A scripted reply waiting in the queue, and the handles a test uses to follow and steer it. */
export interface PendingReply {
  readonly reply: ScriptedReply;
  /** Resolves with the request this reply answers, when the CLI asks. */
  readonly requested: Promise<RecordedRequest>;
  /** Lets a held reply finish streaming; harmless for a reply that is not held. */
  release(): void;
  /** Resolves when the response ended, saying whether the client stayed to the end. */
  readonly ended: Promise<ReplyOutcome>;
}

/** Options of the mock server. */
export interface MockModelServerOptions {
  /** The model id the server reports in its streams and `/v1/models`. */
  readonly model: string;
  /**
   * Answers side requests the test does not script (e.g. a session-title request) without taking a
   * reply from the queue; return undefined for a request that should take the next scripted reply.
   */
  readonly sideReply?: (request: RecordedRequest) => ScriptedReply | undefined;
}

/** A loopback model server scripted by a test. */
export interface MockModelServer {
  /** Base URL including `/v1`, for the CLIs' provider settings. */
  readonly baseUrl: string;
  /** Every request received, oldest first. */
  readonly requests: readonly RecordedRequest[];
  /** Model requests that arrived when the queue was empty (each got a placeholder reply). */
  readonly unexpected: readonly RecordedRequest[];
  /** Queues a reply for the next model request that is not a side request. */
  enqueue(reply: ScriptedReply): PendingReply;
  /**
   * Drops the replies no request took (a step that failed half-way leaves them), so the next step's
   * requests get the replies it queues; returns how many were dropped.
   */
  discardQueued(): number;
  /** The mock's TCP connections so far, for a failure message (a request lost with its connection). */
  connectionNote(): string;
  /** Stops listening and cuts every open response. */
  close(): Promise<void>;
}

/** Text sent when the CLI asks more than the test scripted, so the CLI does not spin on retries. */
const UNSCRIPTED_TEXT = "(the compat mock had no scripted reply for this request)";
/** Largest request body accepted: CLIs send the whole conversation and tool schemas each turn. */
const MAX_BODY_BYTES = 16 * 1024 * 1024;
/**
 * How long an idle keep-alive connection stays open. Node's default (5 s) is about the time between
 * two turns of a step, and a client that sends a turn on a connection the server is closing at that
 * moment loses the request (the keep-alive race); model APIs keep idle connections far longer.
 */
const KEEP_ALIVE_MS = 10 * 60_000;

interface QueuedReply {
  readonly reply: ScriptedReply;
  readonly onRequest: (request: RecordedRequest) => void;
  readonly released: Promise<void>;
  readonly onEnd: (outcome: ReplyOutcome) => void;
}

/** Starts the mock on 127.0.0.1 with a port the OS picks. */
export async function startMockModelServer(options: MockModelServerOptions): Promise<MockModelServer> {
  const requests: RecordedRequest[] = [];
  const unexpected: RecordedRequest[] = [];
  const queue: QueuedReply[] = [];
  const openResponses = new Set<ServerResponse>();
  const connections = { opened: 0, open: 0, errored: 0 };

  const server = createServer((req, res) => {
    openResponses.add(res);
    res.once("close", () => openResponses.delete(res));
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: err instanceof Error ? err.message : String(err) } }));
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    const api: ModelApi = path.endsWith("/responses")
      ? "responses"
      : path.endsWith("/chat/completions")
        ? "chat-completions"
        : path.endsWith("/messages") && req.method === "POST"
          ? "messages"
          : path.endsWith(":streamGenerateContent")
            ? "gemini"
            : "other";
    const body: unknown = raw.length > 0 && isJson(req) ? JSON.parse(raw) : raw;
    const request: RecordedRequest = { api, method: req.method ?? "GET", path, body, receivedAt: Date.now() };
    requests.push(request);
    if (api === "other") {
      answerOther(path, res);
      return;
    }
    const side = options.sideReply?.(request);
    let queued: QueuedReply;
    if (side !== undefined) {
      queued = { reply: side, onRequest: () => undefined, released: Promise.resolve(), onEnd: () => undefined };
    } else {
      const next = queue.shift();
      if (next === undefined) {
        unexpected.push(request);
        queued = {
          reply: { text: UNSCRIPTED_TEXT },
          onRequest: () => undefined,
          released: Promise.resolve(),
          onEnd: () => undefined,
        };
      } else {
        queued = next;
      }
    }
    queued.onRequest(request);
    const outcome = await stream(api, queued, res);
    queued.onEnd(outcome);
  }

  async function stream(
    api: Exclude<ModelApi, "other">,
    queued: QueuedReply,
    res: ServerResponse,
  ): Promise<ReplyOutcome> {
    const id = randomBytes(6).toString("hex");
    let gone = false;
    res.once("close", () => {
      gone = !res.writableFinished;
    });
    const error = queued.reply.error;
    if (error) {
      res.writeHead(error.status, { "content-type": "application/json", ...error.headers });
      res.end(JSON.stringify(error.body));
      return "completed";
    }
    res.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      connection: "keep-alive",
      ...queued.reply.headers,
    });
    const { first, body } = wireEvents(api, id, queued.reply);
    // A reply held mid-text streams its first words before the hold, like a model cut off mid-answer.
    const firstDelta = queued.reply.hold === "mid-text" ? body.findIndex((e) => e.text) : -1;
    const before = firstDelta >= 0 ? [first, ...body.slice(0, firstDelta + 1).map((e) => e.wire)] : [first];
    const after = body.slice(firstDelta + 1).map((e) => e.wire);
    for (const wire of before) res.write(wire);
    const closed = new Promise<void>((r) => res.once("close", () => r()));
    await Promise.race([queued.released, closed]);
    if (gone || res.destroyed) return "aborted";
    for (const wire of after) res.write(wire);
    res.end();
    return "completed";
  }

  /** The wire form of one reply: the opening event, then the rest, each marked when it carries text. */
  function wireEvents(
    api: Exclude<ModelApi, "other">,
    id: string,
    reply: ScriptedReply,
  ): { first: string; body: { wire: string; text: boolean }[] } {
    if (api === "responses") {
      return {
        first: encodeResponsesEvent(responseCreated(`resp_${id}`, options.model)),
        body: responseBody(`resp_${id}`, options.model, reply).map((e) => ({
          wire: encodeResponsesEvent(e),
          text: e.type === "response.output_text.delta",
        })),
      };
    }
    if (api === "gemini") {
      return {
        first: encodeGeminiChunk(firstGeminiChunk(`resp_${id}`, options.model)),
        body: restGeminiChunks(`resp_${id}`, options.model, reply).map((c) => ({
          wire: encodeGeminiChunk(c),
          text: geminiChunkHasText(c),
        })),
      };
    }
    if (api === "messages") {
      return {
        first: encodeMessagesEvent(messageStart(`msg_${id}`, options.model, reply.usage)),
        body: messageBody(`msg_${id}`, reply).map((e) => ({
          wire: encodeMessagesEvent(e),
          text: e.type === "content_block_delta" && JSON.stringify(e).includes('"text_delta"'),
        })),
      };
    }
    const chunks: ChatCompletionChunk[] = restChunks(`chatcmpl-${id}`, options.model, reply);
    return {
      first: encodeChunk(firstChunk(`chatcmpl-${id}`, options.model)),
      body: [
        ...chunks.map((c) => ({ wire: encodeChunk(c), text: JSON.stringify(c.choices).includes('"content"') })),
        { wire: STREAM_DONE, text: false },
      ],
    };
  }

  function answerOther(path: string, res: ServerResponse): void {
    if (path.endsWith("/messages/count_tokens")) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ input_tokens: 12 }));
      return;
    }
    if (path.endsWith(":countTokens")) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ totalTokens: 12 }));
      return;
    }
    if (path.endsWith("/models")) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          object: "list",
          data: [{ id: options.model, object: "model", created: 0, owned_by: "staragent-compat" }],
        }),
      );
      return;
    }
    res.writeHead(404, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: { message: `the compat mock does not serve ${path}` } }));
  }

  server.keepAliveTimeout = KEEP_ALIVE_MS;
  server.on("connection", (socket) => {
    connections.opened++;
    connections.open++;
    socket.once("close", (hadError) => {
      connections.open--;
      if (hadError) connections.errored++;
    });
  });
  await new Promise<void>((resolveListen, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolveListen());
  });
  const { port } = server.address() as AddressInfo;

  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    unexpected,
    enqueue(reply) {
      let onRequest: (request: RecordedRequest) => void = () => undefined;
      let release: () => void = () => undefined;
      let onEnd: (outcome: ReplyOutcome) => void = () => undefined;
      const requested = new Promise<RecordedRequest>((r) => {
        onRequest = r;
      });
      const released = new Promise<void>((r) => {
        release = r;
      });
      const ended = new Promise<ReplyOutcome>((r) => {
        onEnd = r;
      });
      if (reply.hold === undefined || reply.hold === false) release();
      queue.push({ reply, onRequest, released, onEnd });
      return { reply, requested, release, ended };
    },
    discardQueued() {
      return queue.splice(0, queue.length).length;
    },
    connectionNote() {
      return `${connections.opened} connections opened, ${connections.open} open, ${connections.errored} closed by an error`;
    },
    async close() {
      for (const res of openResponses) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

function isJson(req: IncomingMessage): boolean {
  return (req.headers["content-type"] ?? "").includes("json");
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buf = chunk as Buffer;
    size += buf.length;
    if (size > MAX_BODY_BYTES) throw new Error("request body too large for the compat mock");
    chunks.push(buf);
  }
  return Buffer.concat(chunks).toString("utf8");
}
