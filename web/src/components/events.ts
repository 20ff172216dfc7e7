import type { Session } from "../../../gen/staragent/v1/session_pb.js";
import type { SessionFilter } from "../state/session-filter.js";
import type { QuickKey } from "../terminal/keys.js";
import type { Osc52Choice } from "../terminal/osc52-consent.js";

/**
 * Every custom event the dashboard's components fire, with its detail: data goes down as properties,
 * and what a person did comes up as one of these (bubbling, composed). Add a new event here, and tsc
 * checks both who fires it and who listens.
 */
export interface SaEventDetails {
  /** sa-quick-keys: a quick key was pressed. */
  "sa-quick-key": QuickKey;
  /** sa-quick-keys: the sticky Ctrl was toggled. */
  "sa-ctrl-toggle": undefined;
  /** sa-session-view: Stop… was chosen for this session (the app asks for confirmation). */
  "sa-stop-session": Session;
  /** sa-banner: Retry now. */
  "sa-retry": undefined;
  /** sa-session-list: the first snapshot is on screen. */
  "sa-rendered": undefined;
  /** sa-session-list: New session or Adopt from the empty list. */
  "sa-open-dialog": "create" | "adopt" | "webhooks";
  /** sa-session-list: the person changed the filter (the app keeps it in the address). */
  "sa-filter-change": SessionFilter;
  /** sa-login: the login worked; the detail is the local path to go to. */
  "sa-logged-in": string;
  /** sa-osc52-prompt: the person's answer to a program's first copy in this session. */
  "sa-osc52-choice": Osc52Choice;
}

/** The names of the dashboard's events. */
export type SaEventName = keyof SaEventDetails;

/** One of the dashboard's events. */
export type SaEvent<K extends SaEventName> = CustomEvent<SaEventDetails[K]>;

/** Fires one of the dashboard's events, bubbling out of the component (and any shadow root around it). */
export function fire<K extends SaEventName>(target: EventTarget, type: K, detail: SaEventDetails[K]): void {
  target.dispatchEvent(new CustomEvent(type, { detail, bubbles: true, composed: true }));
}

declare global {
  interface HTMLElementEventMap {
    "sa-quick-key": SaEvent<"sa-quick-key">;
    "sa-ctrl-toggle": SaEvent<"sa-ctrl-toggle">;
    "sa-stop-session": SaEvent<"sa-stop-session">;
    "sa-retry": SaEvent<"sa-retry">;
    "sa-rendered": SaEvent<"sa-rendered">;
    "sa-open-dialog": SaEvent<"sa-open-dialog">;
    "sa-filter-change": SaEvent<"sa-filter-change">;
    "sa-logged-in": SaEvent<"sa-logged-in">;
    "sa-osc52-choice": SaEvent<"sa-osc52-choice">;
  }
}
