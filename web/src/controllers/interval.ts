import type { ReactiveController, ReactiveControllerHost } from "lit";

/**
 * Re-renders the host every `ms` while it is connected and `when()` holds: a countdown, or "3 min ago"
 * labels that age. The timer exists only while the host is connected.
 */
export class IntervalController implements ReactiveController {
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly host: ReactiveControllerHost,
    private readonly ms: number,
    private readonly when: () => boolean = () => true,
  ) {
    host.addController(this);
  }

  hostConnected(): void {
    if (this.timer !== undefined) return;
    this.timer = setInterval(() => {
      if (this.when()) this.host.requestUpdate();
    }, this.ms);
  }

  hostDisconnected(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }
}
