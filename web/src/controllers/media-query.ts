import type { ReactiveController, ReactiveControllerHost } from "lit";

/** The part of `window` a media query needs (a test passes its own). */
export interface MediaQueryEnv {
  matchMedia(query: string): MediaQueryList;
}

/**
 * Follows a CSS media query while the host is connected: `matches` is current, and each change
 * re-renders the host and calls `onChange` (a coarse pointer appearing, the system's colour scheme).
 */
export class MediaQueryController implements ReactiveController {
  /** Whether the query matches now. */
  matches: boolean;
  private readonly list: MediaQueryList;

  constructor(
    private readonly host: ReactiveControllerHost,
    query: string,
    private readonly onChange: (matches: boolean) => void = () => {},
    env: MediaQueryEnv = window,
  ) {
    this.list = env.matchMedia(query);
    this.matches = this.list.matches;
    host.addController(this);
  }

  hostConnected(): void {
    this.matches = this.list.matches;
    this.list.addEventListener("change", this.changed);
  }

  hostDisconnected(): void {
    this.list.removeEventListener("change", this.changed);
  }

  private readonly changed = () => {
    this.matches = this.list.matches;
    this.onChange(this.matches);
    this.host.requestUpdate();
  };
}
