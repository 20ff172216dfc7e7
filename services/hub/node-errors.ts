import { Code, ConnectError } from "@connectrpc/connect";
import { SERVER_ROLE_HEADER } from "../common/hops.js";
import { refusalOf } from "../common/refusals.js";

/**
 * Why the Hub cannot use a Node right now. `unreachable` passes by itself (the Hub keeps checking);
 * the others need a person: a token the Node refuses, a Node serving another name, a URL that leads
 * back to the Hub or to another Hub, a token that cannot be sent, a Node failing its health check.
 */
export type NodeProblem = "unreachable" | "refused" | "wrong-node" | "loop" | "not-a-node" | "bad-token" | "unhealthy";

/** What a failed call to a Node means for the Hub. */
export type NodeFailure = NodeProblem | "answer";

/**
 * Sorts an error from a call to a remote Node: the Node refused the Hub itself (its token, a loop),
 * is not a Node, could not be reached, or answered the request (`answer`: its own error about the
 * request, such as NOT_FOUND for a session, to pass on unchanged).
 */
export function classifyNodeError(error: unknown): NodeFailure {
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
        "Node's $STARAGENT_HOME/node_token or its STARAGENT_NODE_TOKEN (RemoveNode and AddNode again; for " +
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
  }
}
