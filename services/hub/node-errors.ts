import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import { SERVER_ROLE_HEADER } from "../common/hops.js";
import { refusalOf } from "../common/refusals.js";

/**
 * Why the Hub cannot use a Node right now. `unreachable` passes by itself (the Hub keeps checking);
 * the others need a person: a token the Node refuses, a Node serving another name, a URL that leads
 * back to the Hub or to another Hub, a token that cannot be sent, a Node failing its health check, a
 * TLS connection the Hub refuses (a certificate it does not trust, or no TLS on the other end).
 */
export type NodeProblem =
  | "unreachable"
  | "refused"
  | "wrong-node"
  | "loop"
  | "not-a-node"
  | "bad-token"
  | "unhealthy"
  | "untrusted-certificate"
  | "not-tls";

/** What a failed call to a Node means for the Hub. */
export type NodeFailure = NodeProblem | "answer";

/**
 * Sorts an error from a call to a remote Node: the Node refused the Hub itself (its token, a loop),
 * is not a Node, could not be reached, or answered the request (`answer`: its own error about the
 * request, such as NOT_FOUND for a session, to pass on unchanged).
 */
export function classifyNodeError(error: unknown): NodeFailure {
  const tls = tlsFailure(error);
  if (tls) return tls;
  if (!(error instanceof ConnectError)) return "unreachable";
  const refusal = refusalOf(error);
  if (refusal === "loop") return "loop";
  if (error.metadata.get(SERVER_ROLE_HEADER) === "hub") return "not-a-node";
  if (refusal === "credentials" || error.code === Code.Unauthenticated) return "refused";
  if (error.code === Code.Unavailable || error.code === Code.DeadlineExceeded || error.code === Code.Unknown) {
    return "unreachable";
  }
  // A stream the Hub did not cancel but that ended as cancelled, or a reset connection (connect-node
  // reports ECONNRESET and destroyed streams as ABORTED; no StarAgent server answers ABORTED): the
  // connection went.
  if (error.code === Code.Canceled || error.code === Code.Aborted) return "unreachable";
  return "answer";
}

/** OpenSSL's and Node's codes for a server certificate the client does not accept. */
const CERTIFICATE_CODES =
  /^(DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT(_LOCALLY)?|CERT_\w+|ERR_TLS_CERT_ALTNAME_INVALID)$/;
/** Codes of a TLS client that met something other than TLS (an http:// Node given as https://). */
const NOT_TLS_CODES = /^(ERR_SSL_WRONG_VERSION_NUMBER|ERR_SSL_PACKET_LENGTH_TOO_LONG|EPROTO)$/;

/** A TLS failure in `error` or its causes: the Node's certificate refused, or no TLS at the other end. */
function tlsFailure(error: unknown): "untrusted-certificate" | "not-tls" | undefined {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    const code = (e as NodeJS.ErrnoException).code;
    if (typeof code !== "string") continue;
    if (CERTIFICATE_CODES.test(code)) return "untrusted-certificate";
    if (NOT_TLS_CODES.test(code)) return "not-tls";
  }
  return undefined;
}

/** The text of an error, for people (never a token: see `NodeRegistry`, which scrubs them). */
export function errorText(error: unknown): string {
  if (error instanceof ConnectError) return `${Code[error.code]}: ${error.rawMessage}`;
  return error instanceof Error ? error.message : String(error);
}

/** What a Node's problem means and what fixes it, for `last_error` and the Hub's own errors. */
export function describeProblem(
  problem: NodeProblem,
  node: { readonly id: string; readonly url: string },
  why: string,
): string {
  switch (problem) {
    case "unreachable":
      return `cannot reach ${node.url} (${why})`;
    case "refused":
      return (
        `the Node at ${node.url} refuses the Hub's node token (${why}): give the Hub the token from the ` +
        "Node's $STARAGENT_HOME/node_token or its STARAGENT_NODE_TOKEN (UpdateNode, staragent nodes set; for " +
        "--node nodes, the Hub's STARAGENT_NODE_TOKEN)"
      );
    case "wrong-node":
      return (
        `the Node at ${node.url} is not ${node.id} (${why}): add it under the name it serves, or start it ` +
        `with --name ${node.id}`
      );
    case "loop":
      return `${node.url} leads back to this Hub, not to a Node (${why}): give the Node's own address`;
    case "not-a-node":
      return `${node.url} is a StarAgent Hub, not a Node: give the address 'staragent node' listens on`;
    case "bad-token":
      return (
        `the node token stored for ${node.id} has characters a bearer token cannot have: RemoveNode and ` +
        "AddNode again with the Node's token"
      );
    case "unhealthy":
      return `the Node at ${node.url} fails its health check (${why})`;
    case "untrusted-certificate":
      return (
        `the Hub does not trust the certificate of ${node.url} (${why}): start the Hub with --node-ca FILE ` +
        "naming the Node's certificate (or the CA that signed it), or with NODE_EXTRA_CA_CERTS=FILE; the URL's " +
        "host must be a name the certificate holds"
      );
    case "not-tls":
      return `${node.url} does not answer in TLS (${why}): the Node serves http://, not https:// (or give it --tls-cert and --tls-key)`;
  }
}

/** How far a deadline may be from passing for a DEADLINE_EXCEEDED to count as the caller's own. */
const CALLER_DEADLINE_SLACK_MS = 50;

/**
 * The caller's own end, when a call to a node for `ctx` failed because of the caller: it went away
 * (CANCELED), or its deadline (passed on to the node) ran out (DEADLINE_EXCEEDED). Undefined when
 * the failure is the node's.
 */
export function callerEnd(ctx: HandlerContext, error: unknown): ConnectError | undefined {
  if (ctx.signal.aborted) {
    const reason = ctx.signal.reason;
    return reason instanceof ConnectError ? reason : new ConnectError("the caller went away", Code.Canceled);
  }
  const remaining = ctx.timeoutMs();
  const deadlinePassed = remaining !== undefined && remaining <= CALLER_DEADLINE_SLACK_MS;
  if (deadlinePassed && error instanceof ConnectError && error.code === Code.DeadlineExceeded) {
    return new ConnectError("the call's deadline passed", Code.DeadlineExceeded);
  }
  return undefined;
}

/** `text` without `token` (messages about a node must never carry its token). */
export function scrub(text: string, token: string): string {
  return token.length > 0 ? text.split(token).join("<node token>") : text;
}

/**
 * The error to give the caller for a failed call to a node (see `NodeRegistry.relayError`), and
 * whether the failure may mean the Node is gone (its health check should look soon). `token` is the
 * node's, scrubbed from every message.
 */
export function relayNodeError(
  node: { readonly id: string; readonly local: boolean; readonly url: string },
  error: unknown,
  ctx: HandlerContext,
  token: string,
): { readonly error: ConnectError; readonly suspect: boolean } {
  const own = callerEnd(ctx, error);
  if (own) return { error: own, suspect: false };
  if (node.local) {
    const e = ConnectError.from(error);
    const relayed = new ConnectError(e.rawMessage, e.code);
    relayed.details.push(...e.details);
    return { error: relayed, suspect: false };
  }
  const failure = classifyNodeError(error);
  const why = scrub(errorText(error), token);
  if (failure === "answer") {
    const e = error as ConnectError;
    const relayed = new ConnectError(scrub(e.rawMessage, token), e.code);
    relayed.details.push(...e.details);
    return { error: relayed, suspect: false };
  }
  if (failure === "unreachable") {
    return { error: new ConnectError(`node ${node.id} is unreachable: ${why}`, Code.Unavailable), suspect: true };
  }
  return {
    error: new ConnectError(
      `the Hub cannot use node ${node.id}: ${describeProblem(failure, node, why)}`,
      Code.FailedPrecondition,
    ),
    suspect: true,
  };
}
