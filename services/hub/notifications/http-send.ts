/** Longest wait for a receiver (push service, webhook) to answer one request. */
export const SEND_TIMEOUT_MS = 10_000;
/** Most of a receiver's answer read, for the delivery log's error text. */
const MAX_ERROR_BODY = 300;

/** How one HTTP request to a receiver ended. */
export interface SendResult {
  /** HTTP status; 0 when there was no answer (refused, timed out). */
  readonly status: number;
  /** Why it failed, for people; empty on a 2xx. */
  readonly error: string;
  /** Seconds the receiver asked to wait (`Retry-After`), when it did. */
  readonly retryAfterSeconds?: number;
}

/**
 * POSTs one request with a timeout and answers how it ended, never throwing: a receiver that is down,
 * slow or answers an error is an outcome to log and maybe retry, not an exception in the dispatcher.
 */
export async function sendRequest(
  url: string,
  init: {
    headers: Record<string, string>;
    body: Uint8Array | string;
    /** Says why a 2xx answer is still a failure (chat APIs that answer 200 with an error code). */
    refusal?: (text: string) => string | undefined;
    /** Ends the request early (the Hub is stopping). */
    signal?: AbortSignal;
  },
  timeoutMs = SEND_TIMEOUT_MS,
): Promise<SendResult> {
  try {
    const res = await fetch(url, {
      method: "POST",
      headers: init.headers,
      body: init.body,
      redirect: "error",
      signal: init.signal
        ? AbortSignal.any([init.signal, AbortSignal.timeout(timeoutMs)])
        : AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text().catch(() => "");
    if (res.ok) {
      const refused = init.refusal?.(text);
      return { status: res.status, error: refused === undefined ? "" : `refused: ${oneLine(refused)}` };
    }
    const retryAfter = Number(res.headers.get("retry-after"));
    return {
      status: res.status,
      error: `${res.status} ${res.statusText}${text ? `: ${oneLine(text)}` : ""}`.trim(),
      ...(Number.isFinite(retryAfter) && retryAfter > 0 ? { retryAfterSeconds: retryAfter } : {}),
    };
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const reason =
      err instanceof Error && err.name === "TimeoutError"
        ? `no answer within ${timeoutMs} ms`
        : init.signal?.aborted
          ? "the Hub stopped before an answer came"
          : (cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err)));
    return { status: 0, error: `cannot reach ${new URL(url).origin}: ${reason}` };
  }
}

/** Whether a failed request is worth another try: no answer, a timeout, rate limiting, a server error. */
export function retryable(status: number): boolean {
  return status === 0 || status === 408 || status === 425 || status === 429 || status >= 500;
}

function oneLine(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed
  const flat = text.replace(/[\u0000-\u001f\u007f]+/g, " ").trim();
  return flat.length > MAX_ERROR_BODY ? `${flat.slice(0, MAX_ERROR_BODY)}…` : flat;
}
