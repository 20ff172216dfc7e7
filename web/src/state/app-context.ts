import { createContext } from "@lit/context";
import type { HubClient } from "../api/hub-client.js";
import type { NodeStore } from "./node-store.js";
import type { PreferencesStore } from "./preferences.js";
import type { SessionStore } from "./session-store.js";
import type { StreamState } from "./stream-supervisor.js";

/** What every view shares, provided by `sa-app` through a context. */
export interface AppServices {
  readonly hub: HubClient;
  readonly sessions: SessionStore;
  readonly nodes: NodeStore;
  /** This browser's preferences; subscribe to follow changes. */
  readonly preferences: PreferencesStore;
  /** Goes to a dashboard path (adds a history entry unless `replace`). */
  navigate(path: string, options?: { replace?: boolean }): void;
  /** Shows a short message in the live region (errors stay until dismissed). */
  toast(message: string, tone?: "info" | "error"): void;
  /** The state of the WatchSessions stream (the Hub's reachability). */
  hubState(): StreamState;
  /** Wakes (re-checks) every stream at once, as after sleep. */
  subscribeWake(listener: () => void): () => void;
}

export const appContext = createContext<AppServices>(Symbol("staragent-app"));
