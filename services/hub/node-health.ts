import { type Client, Code, ConnectError } from "@connectrpc/connect";
import type { NodeService } from "../../gen/staragent/v1/node_service_pb.js";
import { SERVER_ROLE_HEADER, VIA_HEADER } from "../common/hops.js";
import { WakeSignal } from "../common/wake-signal.js";
import { classifyNodeError, errorText, type NodeProblem } from "./node-errors.js";

/** How often an online Node is checked: with the timeout below, a hung Node shows within 7 s. */
export const HEALTH_INTERVAL_MS = 2_000;
/**
 * How long a health check may take. A Node on loopback or a private network answers in
 * milliseconds; a Node paused or behind a silent connection never does. Generous, because a Node on
 * a machine starved of CPU can take seconds, and it is not gone for that (see `slow` below).
 */
export const HEALTH_TIMEOUT_MS = 5_000;
/** First wait before checking a failing Node again; doubles up to the maximum. */
export const HEALTH_RETRY_INITIAL_MS = 500;
/** Longest wait between checks of a failing Node: how long a Node that came back may stay OFFLINE. */
export const HEALTH_RETRY_MAX_MS = 5_000;
/**
 * Wait between checks of a Node that refuses the Hub's token: each refused check counts as a failed
 * login on the Node, and a person must fix the token anyway (re-adding the node checks at once).
 */
export const HEALTH_REFUSED_RETRY_MS = 30_000;
/**
 * Shortest time between two checks when calls and streams ask for one early (`wake`): a dead Node
 * under many calls is checked a few times a second, not once per call.
 */
const HEALTH_WAKE_GAP_MS = 250;

/** The result of one health check. */
export type HealthOutcome =
  | { readonly ok: true; readonly version: string; readonly hostname: string }
  | {
      readonly ok: false;
      readonly problem: NodeProblem;
      readonly why: string;
      /** The check ran out of time (rather than being refused or failing at once). */
      readonly timedOut?: boolean;
    };

/** What a health check calls. */
export interface HealthTarget {
  readonly id: string;
  readonly nodes: Client<typeof NodeService>;
  /** This Hub's `staragent-via` value (its instance id): a URL leading back to the Hub is refused. */
  readonly via: string;
}

/**
 * One health check: `GetNode` for the node's own name with its node token. It proves the Node is up,
 * accepts the Hub's token, serves that name, is a Node (not a Hub) and is not this Hub, and brings
 * its version and host name.
 */
export async function checkNode(
  target: HealthTarget,
  signal: AbortSignal,
  timeoutMs = HEALTH_TIMEOUT_MS,
): Promise<HealthOutcome> {
  let role = "";
  try {
    const res = await target.nodes.getNode(
      { name: `nodes/${target.id}` },
      {
        signal,
        timeoutMs,
        headers: { [VIA_HEADER]: target.via },
        onHeader: (headers) => {
          role = headers.get(SERVER_ROLE_HEADER) ?? "";
        },
      },
    );
    if (role === "hub") return { ok: false, problem: "not-a-node", why: "it answers as a Hub" };
    if (res.node?.name !== `nodes/${target.id}`) {
      return { ok: false, problem: "wrong-node", why: `it answers as ${res.node?.name ?? "nothing"}` };
    }
    return { ok: true, version: res.node.version, hostname: res.node.hostname };
  } catch (err) {
    const failure = classifyNodeError(err);
    const why = errorText(err);
    const timedOut = err instanceof ConnectError && err.code === Code.DeadlineExceeded;
    if (failure !== "answer") return { ok: false, problem: failure, why, timedOut };
    const notFound = err instanceof ConnectError && err.code === Code.NotFound;
    return { ok: false, problem: notFound ? "wrong-node" : "unhealthy", why };
  }
}

/**
 * Checks one Node over and over, whether or not anyone lists or watches: every HEALTH_INTERVAL_MS
 * while it is healthy, with backoff (HEALTH_RETRY_INITIAL_MS doubling to HEALTH_RETRY_MAX_MS) while
 * it is not (every HEALTH_REFUSED_RETRY_MS while it refuses the Hub's token). Calls and streams that
 * see the Node fail ask for an early check (`wake`).
 */
export class HealthLoop {
  private readonly stop = new AbortController();
  private running: Promise<void> | undefined;
  private lastStart = 0;
  /** Set by `wake`; a wake during a check shortens the wait after it. */
  private readonly woken = new WakeSignal();

  /** `check` runs one health check and applies its outcome; it must not throw. */
  constructor(private readonly check: (signal: AbortSignal) => Promise<HealthOutcome>) {}

  /** Starts checking (the first check at once). */
  start(): void {
    this.running ??= this.run();
  }

  /** Asks for a check soon (within HEALTH_WAKE_GAP_MS of the last one). */
  wake(): void {
    this.woken.wake();
  }

  /** Stops checking; resolves once no check runs. */
  async close(): Promise<void> {
    this.stop.abort();
    await this.running;
  }

  private async run(): Promise<void> {
    let delay = 0;
    let backoff = HEALTH_RETRY_INITIAL_MS;
    while (!this.stop.signal.aborted) {
      await this.pause(delay);
      if (this.stop.signal.aborted) return;
      this.lastStart = Date.now();
      const outcome = await this.check(this.stop.signal);
      if (outcome.ok) {
        delay = HEALTH_INTERVAL_MS;
        backoff = HEALTH_RETRY_INITIAL_MS;
      } else if (outcome.problem === "refused") {
        delay = HEALTH_REFUSED_RETRY_MS;
      } else {
        delay = backoff;
        backoff = Math.min(backoff * 2, HEALTH_RETRY_MAX_MS);
      }
    }
  }

  /**
   * Waits `ms` before the next check (at most HEALTH_WAKE_GAP_MS when woken during the last one); a
   * wake meanwhile brings the check forward to HEALTH_WAKE_GAP_MS after the last one began.
   */
  private async pause(ms: number): Promise<void> {
    let due = Date.now() + (this.woken.take() ? Math.min(ms, HEALTH_WAKE_GAP_MS) : ms);
    while (!this.stop.signal.aborted) {
      const woken = await this.woken.wait(Math.max(0, due - Date.now()), this.stop.signal, { unref: true });
      if (!woken) return;
      this.woken.take();
      due = Math.max(Date.now(), this.lastStart + HEALTH_WAKE_GAP_MS);
    }
  }
}
