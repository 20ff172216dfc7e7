import type { ReactiveController, ReactiveControllerHost } from "lit";

/**
 * A ReactiveControllerHost without a browser, for the controllers' unit tests: it records update
 * requests and drives the lifecycle (connect, update, disconnect) by hand.
 */
export class FakeHost implements ReactiveControllerHost {
  readonly controllers: ReactiveController[] = [];
  /** How many times a controller asked the host to render. */
  updates = 0;
  readonly updateComplete = Promise.resolve(true);

  addController(controller: ReactiveController): void {
    this.controllers.push(controller);
  }

  removeController(controller: ReactiveController): void {
    const i = this.controllers.indexOf(controller);
    if (i >= 0) this.controllers.splice(i, 1);
  }

  requestUpdate(): void {
    this.updates++;
  }

  /** As when the host element is connected to the document. */
  connect(): void {
    for (const c of this.controllers) c.hostConnected?.();
  }

  /** As after the host rendered. */
  update(): void {
    for (const c of this.controllers) c.hostUpdate?.();
    for (const c of this.controllers) c.hostUpdated?.();
  }

  /** As when the host element is removed from the document. */
  disconnect(): void {
    for (const c of this.controllers) c.hostDisconnected?.();
  }
}

/** An EventTarget that knows its listeners, to prove a controller removed what it added. */
export class CountingTarget extends EventTarget {
  private readonly registered: Array<{ type: string; callback: unknown; capture: boolean }> = [];

  /** How many listeners are registered now. */
  get listeners(): number {
    return this.registered.length;
  }

  override addEventListener(
    type: string,
    callback: EventListenerOrEventListenerObject | null,
    options?: AddEventListenerOptions | boolean,
  ): void {
    const capture = typeof options === "boolean" ? options : (options?.capture ?? false);
    if (!this.registered.some((r) => r.type === type && r.callback === callback && r.capture === capture)) {
      this.registered.push({ type, callback, capture });
    }
    super.addEventListener(type, callback, options);
  }

  override removeEventListener(
    type: string,
    callback: EventListenerOrEventListenerObject | null,
    options?: EventListenerOptions | boolean,
  ): void {
    const capture = typeof options === "boolean" ? options : (options?.capture ?? false);
    const i = this.registered.findIndex((r) => r.type === type && r.callback === callback && r.capture === capture);
    if (i >= 0) this.registered.splice(i, 1);
    super.removeEventListener(type, callback, options);
  }
}
