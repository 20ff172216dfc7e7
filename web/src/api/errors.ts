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

/**
 * The Hub's message as a sentence a person reads: a leading field name (`session_id: ...`, there for
 * scripts) is left out, and the first letter is raised only when the message begins with an ordinary
 * word, so names (`w1`, `api-claude`, a path, a quoted value) keep their spelling. Where the message
 * then begins with the value a person gave (`cwd: "/x" is not an existing directory`) or with
 * `required`, the field is named in words first ("The folder "/x" is not an existing directory."), so
 * the sentence says what the value is.
 */
function sentence(text: string): string {
  const field = LEADING_FIELD.exec(text);
  let body = field ? text.slice(field[0].length) : text;
  const noun = field ? fieldNoun(field[1] ?? "") : "";
  if (noun && /^["'/~]/.test(body)) body = `${noun} ${body}`;
  else if (noun && /^required(\s|$)/.test(body)) body = `${noun} is ${body}`;
  const first = /^[a-z]+(\s|$)/.test(body) ? body.charAt(0).toUpperCase() + body.slice(1) : body;
  return /[.!?)"]$/.test(first) ? first : `${first}.`;
}

/** A field name before a message (`node_id: `, `request.cwd: `), as the Hub's validation errors begin. */
const LEADING_FIELD = /^([a-z][a-z0-9]*(?:[_.][a-z0-9]+)*): (?=\S)/;

/** What the dashboard's forms call the fields the Hub's refusals name. */
const FIELD_NOUNS: Readonly<Record<string, string>> = {
  cwd: "the folder",
  path: "the folder",
  node_id: "the node name",
  session_id: "the session name",
  name: "the name",
  url: "the address",
  command: "the command",
  "worktree.branch": "the branch",
  "worktree.base_ref": "the base",
  "worktree.path": "the worktree's folder",
};

/** A field in words: from the table, else its last part with spaces (`display_name` → "the display name"). */
function fieldNoun(field: string): string {
  return FIELD_NOUNS[field] ?? `the ${(field.split(".").pop() ?? field).replace(/_/g, " ")}`;
}

/**
 * The Hub refuses to add or change a Node that fails its check with a sentence that ends by saying
 * how to store it all the same in the command line's words ("use force (staragent nodes add
 * --force)", services/hub/node-vetting.ts). In the dashboard's node forms that choice is a checkbox:
 * this is the refusal as the form says it, naming the checkbox by its `label`.
 */
export function describeNodeRefusal(err: unknown, label: string): string {
  return describeError(err).replace(CLI_FORCE_HINT, `tick "${label}" below`);
}

/** The command line's way to store a Node all the same, as the Hub's refusals end. */
const CLI_FORCE_HINT = /use force \(staragent nodes [a-z]+ --force\)/;
