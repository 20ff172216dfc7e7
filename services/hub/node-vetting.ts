import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { Health } from "../../gen/grpc/health/v1/health_pb.js";
import { NodeService } from "../../gen/staragent/v1/node_service_pb.js";
import type { NodeConnector } from "./node-connection.js";
import { classifyNodeError, describeProblem, errorText, type NodeProblem, scrub } from "./node-errors.js";
import { checkNode, type HealthOutcome } from "./node-health.js";
import type { StoredNode } from "./node-store.js";

/**
 * How long each of AddNode's two looks at a Node may take (its health, then one call with the
 * token). A Node on loopback or a private network answers in milliseconds.
 */
export const VET_TIMEOUT_MS = 2_000;

/**
 * Looks at a Node before the Hub stores it (AddNode, UpdateNode): first its health (unauthenticated,
 * so an address that leads nowhere is told apart from a wrong token), then `GetNode` with its token.
 * A URL leading back to a Hub is always refused (INVALID_ARGUMENT). Any other problem refuses with one
 * sentence naming the node, unless `force`: the Node is then stored all the same, and the outcome
 * (undefined when it did not answer in time) starts its health check.
 */
export async function vetNode(
  node: StoredNode,
  options: { connect: NodeConnector; instanceId: string; force: boolean; change: NodeChange },
): Promise<HealthOutcome | undefined> {
  const connection = options.connect(node);
  try {
    const signal = new AbortController().signal;
    let outcome: HealthOutcome | undefined;
    try {
      await createClient(Health, connection.transport).check({ service: "" }, { signal, timeoutMs: VET_TIMEOUT_MS });
    } catch (err) {
      const problem = classifyNodeError(err);
      // A server that answers but has no health service is no StarAgent server; the call below says more.
      if (problem !== "answer") {
        const timedOut = err instanceof ConnectError && err.code === Code.DeadlineExceeded;
        outcome = { ok: false, problem, why: errorText(err), timedOut };
      }
    }
    outcome ??= await checkNode(
      { id: node.id, nodes: createClient(NodeService, connection.transport), via: options.instanceId },
      signal,
      VET_TIMEOUT_MS,
    );
    if (outcome.ok) return outcome;
    const why = scrub(outcome.why, node.token);
    if (outcome.problem === "loop" || outcome.problem === "not-a-node") {
      throw new ConnectError(`url: ${describeProblem(outcome.problem, node, why)}`, Code.InvalidArgument);
    }
    if (!options.force) throw refusal(outcome.problem, node, why, outcome.timedOut === true, options.change);
    return outcome.timedOut ? undefined : outcome;
  } finally {
    connection.close();
  }
}

/** What the refused call was doing: adding a Node (AddNode) or changing a stored one (UpdateNode). */
export type NodeChange = "add" | "update";

/**
 * Appended to each refusal: how to store the Node all the same, with the command that made the call.
 * The dashboard's node forms replace "use force (staragent nodes … --force)" with the name of their
 * checkbox (web/src/api/errors.ts, describeNodeRefusal): keep those words, or change both together.
 */
function forceHint(change: NodeChange): string {
  return change === "add"
    ? "To add it all the same and fix it later, use force (staragent nodes add --force)."
    : "To save the change all the same and fix it later, use force (staragent nodes set --force).";
}

/** The one-sentence refusal of a Node that failed its check, with its Connect code. */
function refusal(
  problem: NodeProblem,
  node: StoredNode,
  why: string,
  timedOut: boolean,
  change: NodeChange,
): ConnectError {
  const hint = forceHint(change);
  switch (problem) {
    case "refused":
      return new ConnectError(
        `Node ${node.id} refused the token. Give the one in the Node's $STARAGENT_HOME/node_token (or its STARAGENT_NODE_TOKEN). ${hint}`,
        Code.InvalidArgument,
      );
    case "wrong-node":
      return new ConnectError(
        `Node ${node.id} is not the name the Node at ${node.url} serves (${why}). Add it under its own name, or start it with --name ${node.id}.`,
        Code.InvalidArgument,
      );
    case "unreachable":
      return new ConnectError(
        timedOut
          ? `Node ${node.id} did not answer at ${node.url} within ${VET_TIMEOUT_MS / 1000} s. Check the address and that 'staragent node' runs there. ${hint}`
          : `Node ${node.id} cannot be reached at ${node.url} (${why}). Check the address and that 'staragent node' runs there. ${hint}`,
        Code.FailedPrecondition,
      );
    default:
      return new ConnectError(
        `Node ${node.id} cannot be used: ${describeProblem(problem, node, why)}. ${hint}`,
        Code.FailedPrecondition,
      );
  }
}
