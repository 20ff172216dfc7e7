import { Code, ConnectError } from "@connectrpc/connect";

/** True when the Hub refused the call for want of a valid login: the dashboard shows the login. */
export function isUnauthenticated(err: unknown): boolean {
  return err instanceof ConnectError && err.code === Code.Unauthenticated;
}

/** True when the call was cancelled on purpose (the view went away), which is not an error to show. */
export function isCancelled(err: unknown): boolean {
  if (err instanceof DOMException && err.name === "AbortError") return true;
  return err instanceof ConnectError && err.code === Code.Canceled;
}

/**
 * A sentence a person understands for a failed call. The Hub's own messages already are sentences
 * (they name the field and the rule); failures to reach the Hub at all are explained here.
 */
export function describeError(err: unknown): string {
  const e = ConnectError.from(err);
  const raw = e.rawMessage.trim();
  if (e.code === Code.Unauthenticated) return "Your login is no longer valid. Log in again.";
  if (isNetworkFailure(e))
    return "Cannot reach the StarAgent Hub. Check that it is running and that this device can reach it.";
  if (e.code === Code.ResourceExhausted && raw !== "") return sentence(raw);
  if (e.code === Code.DeadlineExceeded) return "The Hub took too long to answer. Try again.";
  if (raw === "") return `The call failed (${Code[e.code] ?? "unknown error"}).`;
  return sentence(raw);
}

/** True for errors where no answer came from the Hub (connection refused, reset, offline). */
export function isNetworkFailure(err: unknown): boolean {
  const e = ConnectError.from(err);
  if (e.code !== Code.Unavailable && e.code !== Code.Unknown && e.code !== Code.Internal) return false;
  const text = `${e.rawMessage} ${e.cause instanceof Error ? e.cause.message : ""}`;
  return /failed to fetch|networkerror|network error|load failed|fetch failed|err_connection|connection (refused|reset|closed)|premature close|body stream|terminated|missing trailer|missing endstream/i.test(
    text,
  );
}

/** The Hub's message as a sentence; a leading field name (`session_id: ...`) keeps its spelling. */
function sentence(text: string): string {
  const first = /^[a-z][a-z0-9_.]*:/.test(text) ? text : text.charAt(0).toUpperCase() + text.slice(1);
  return /[.!?)]$/.test(first) ? first : `${first}.`;
}
