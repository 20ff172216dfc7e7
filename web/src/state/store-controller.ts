import type { ReactiveController, ReactiveControllerHost } from "lit";

/** Something views can subscribe to. */
export interface Subscribable {
  subscribe(listener: () => void): () => void;
}

/**
 * Re-renders its host whenever one of the stores changes, while the host is connected. Lit batches
 * the updates, so a burst of events costs one render.
 */
export class StoreController implements ReactiveController {
  private unsubscribers: Array<() => void> = [];

  constructor(
    private readonly host: ReactiveControllerHost,
    private readonly stores: () => Subscribable[],
  ) {
    host.addController(this);
  }

  hostConnected(): void {
    this.unsubscribers = this.stores().map((s) => s.subscribe(() => this.host.requestUpdate()));
  }

  hostDisconnected(): void {
    for (const u of this.unsubscribers.splice(0)) u();
  }
}
