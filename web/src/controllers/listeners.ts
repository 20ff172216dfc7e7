import type { ReactiveController, ReactiveControllerHost } from "lit";

/** One listener: where, which event, what to do, and the listener options. */
export type Listener = readonly [
  target: EventTarget,
  type: string,
  handler: (e: Event) => void,
  options?: AddEventListenerOptions,
];

/**
 * Event listeners on things outside the host (the window, the document, an element it renders) that
 * exist exactly while the host is connected: added on connect, removed on disconnect, in one place
 * instead of a cleanup list per component.
 */
export class ListenersController implements ReactiveController {
  private active: Listener[] = [];

  /** @param listeners computed on each connect (elements the host renders may be new) */
  constructor(
    host: ReactiveControllerHost,
    private readonly listeners: () => readonly Listener[],
  ) {
    host.addController(this);
  }

  /** Adds more listeners for the rest of this connection (elements that exist only after a render). */
  add(...listeners: Listener[]): void {
    for (const l of listeners) {
      l[0].addEventListener(l[1], l[2], l[3]);
      this.active.push(l);
    }
  }

  hostConnected(): void {
    this.add(...this.listeners());
  }

  hostDisconnected(): void {
    for (const [target, type, handler, options] of this.active.splice(0)) {
      target.removeEventListener(type, handler, { capture: options?.capture ?? false });
    }
  }
}
