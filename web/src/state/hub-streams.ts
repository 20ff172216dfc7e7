import type { WatchNodesResponse } from "../../../gen/staragent/v1/node_service_pb.js";
import type { WatchSessionsResponse } from "../../../gen/staragent/v1/session_service_pb.js";
import { isUnauthenticated } from "../api/errors.js";
import type { HubClient } from "../api/hub-client.js";
import type { NodeStore } from "./node-store.js";
import type { SessionStore } from "./session-store.js";
import type { Subscribable } from "./store-controller.js";
import { type StreamState, StreamSupervisor } from "./stream-supervisor.js";

/**
 * Silence on WatchSessions after which it is treated as dead: nodes send a heartbeat after 15 s without
 * changes, so 35 s allows one missed heartbeat and a slow network.
 */
const SESSIONS_LIVENESS_MS = 35_000;
/**
 * WatchNodes sends only changes (no heartbeats), so it has no watchdog of its own: it is reopened with
 * the sessions stream and on wake. This value only disables the watchdog.
 */
const NODES_LIVENESS_MS = 2 ** 31 - 1;

/** Whether the Hub accepted this browser's login. */
export type AuthState = "checking" | "in" | "out";

/** What the streams are built from. */
export interface HubStreamsOptions {
  readonly hub: Pick<HubClient, "sessions" | "nodes">;
  readonly sessions: SessionStore;
  readonly nodes: NodeStore;
  /** True while the page is visible (a hidden page opens no nodes stream). */
  isVisible(): boolean;
  /** Called with each WatchSessions event after the store applied it (the benchmark times these). */
  onSessionsApplied?(event: WatchSessionsResponse, startedAt: number): void;
  /** The Hub refused the login: the page shows the login form. */
  onLoggedOut(): void;
  readonly now?: () => number;
  /** For tests: the delay before retry attempt `n`. */
  readonly retryDelay?: (attempt: number) => number;
}

/**
 * The tab's one WatchSessions stream and its WatchNodes stream, feeding the session and node stores,
 * and the login state they reveal: a live sessions stream means logged in, an Unauthenticated one
 * means logged out (both streams stop and the stores empty). When the Hub comes back after an outage
 * its node list may have changed meanwhile (WatchNodes has no heartbeat), so that stream is reopened
 * too. DOM-free: the page's visibility is asked for.
 */
export class HubStreams implements Subscribable {
  private hubState: StreamState = { kind: "connecting", attempt: 0 };
  private authState: AuthState = "checking";
  private readonly listeners = new Set<() => void>();
  private readonly sessionStream: StreamSupervisor<WatchSessionsResponse>;
  private readonly nodeStream: StreamSupervisor<WatchNodesResponse>;

  constructor(private readonly options: HubStreamsOptions) {
    const now = options.now ?? (() => performance.now());
    this.sessionStream = new StreamSupervisor<WatchSessionsResponse>({
      open: (signal) => options.hub.sessions.watchSessions({ parent: "nodes/-" }, { signal }),
      onMessage: (event) => {
        const start = now();
        options.sessions.apply(event);
        options.onSessionsApplied?.(event, start);
        return undefined;
      },
      onState: (s) => this.onSessionState(s),
      isFatal: isUnauthenticated,
      livenessMs: SESSIONS_LIVENESS_MS,
      ...(options.retryDelay ? { retryDelay: options.retryDelay } : {}),
    });
    this.nodeStream = new StreamSupervisor<WatchNodesResponse>({
      open: (signal) => options.hub.nodes.watchNodes({}, { signal }),
      onMessage: (event) => {
        options.nodes.set(event.nodes);
        return undefined;
      },
      isFatal: isUnauthenticated,
      livenessMs: NODES_LIVENESS_MS,
      ...(options.retryDelay ? { retryDelay: options.retryDelay } : {}),
    });
  }

  /** The WatchSessions stream's state (the Hub's reachability, for the banner). */
  get state(): StreamState {
    return this.hubState;
  }

  /** Whether the Hub accepted the login, as far as the streams tell. */
  get auth(): AuthState {
    return this.authState;
  }

  /** True while the nodes stream is open or reopening. */
  get nodesRunning(): boolean {
    return this.nodeStream.isRunning;
  }

  /** Opens the sessions stream (and the nodes stream while the page is visible). */
  start(): void {
    this.sessionStream.start();
    if (this.options.isVisible()) this.nodeStream.start();
  }

  /** Closes both streams (a page leaving for the back/forward cache, a disconnected app). */
  stop(): void {
    this.sessionStream.stop();
    this.nodeStream.stop();
  }

  /** A login form answered: the streams will tell whether it worked. */
  loggingIn(): void {
    this.setAuth("checking");
    this.start();
  }

  /** The login is known to be gone (refused, or logged out): streams stop, the stores empty. */
  loggedOut(): void {
    this.stop();
    this.options.sessions.clear();
    this.options.nodes.clear();
    this.setAuth("out");
  }

  /** The page became visible: the nodes stream opens again when logged in. */
  visible(): void {
    if (this.authState === "in" && !this.nodeStream.isRunning) this.nodeStream.start();
  }

  /** The page has been hidden a long while: the nodes stream lets its connection go. */
  hiddenLong(): void {
    this.nodeStream.stop();
  }

  /** Every open stream is suspect (sleep, a restored page, the network back): reopen them now. */
  wake(): void {
    if (this.authState === "out") return;
    this.sessionStream.reconnectNow();
    if (this.nodeStream.isRunning) this.nodeStream.reconnectNow();
  }

  /** Calls `listener` after each change of state or login; returns the unsubscribe function. */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private onSessionState(s: StreamState): void {
    const was = this.hubState;
    const wasDown = was.kind === "waiting" || (was.kind === "connecting" && was.attempt > 0);
    this.hubState = s;
    if (s.kind === "live") {
      if (this.authState !== "in") this.authState = "in";
      if (wasDown && this.nodeStream.isRunning) this.nodeStream.reconnectNow();
      else if (!this.nodeStream.isRunning && this.options.isVisible()) this.nodeStream.start();
    }
    this.notify();
    if (s.kind === "stopped" && s.error !== undefined && isUnauthenticated(s.error)) {
      this.loggedOut();
      this.options.onLoggedOut();
    }
  }

  private setAuth(auth: AuthState): void {
    this.authState = auth;
    this.notify();
  }

  private notify(): void {
    for (const l of this.listeners) l();
  }
}
