import type { ReactiveController, ReactiveControllerHost } from "lit";

/** The part of the page the controller reads and writes (a test passes its own). */
export interface VisualViewportEnv {
  readonly viewport: Pick<VisualViewport, "height" | "offsetTop" | "addEventListener" | "removeEventListener"> | null;
  readonly root: { readonly style: Pick<CSSStyleDeclaration, "setProperty"> };
  requestFrame(callback: () => void): number;
}

/**
 * Publishes the visual viewport (the part of the page not under a phone's on-screen keyboard) as the
 * CSS variables `--vv-height` and `--vv-top`, so the layout keeps the composer and the terminal in
 * view. Updated at most once per animation frame, only while the host is connected.
 */
export class VisualViewportController implements ReactiveController {
  private frame = 0;

  constructor(
    host: ReactiveControllerHost,
    private readonly env: VisualViewportEnv = {
      viewport: window.visualViewport,
      root: document.documentElement,
      requestFrame: (cb) => requestAnimationFrame(cb),
    },
  ) {
    host.addController(this);
  }

  hostConnected(): void {
    const vv = this.env.viewport;
    if (!vv) return;
    this.apply();
    vv.addEventListener("resize", this.schedule);
    vv.addEventListener("scroll", this.schedule);
  }

  hostDisconnected(): void {
    const vv = this.env.viewport;
    if (!vv) return;
    vv.removeEventListener("resize", this.schedule);
    vv.removeEventListener("scroll", this.schedule);
  }

  private readonly schedule = () => {
    if (this.frame === 0) this.frame = this.env.requestFrame(() => this.apply());
  };

  private apply(): void {
    this.frame = 0;
    const vv = this.env.viewport;
    if (!vv) return;
    this.env.root.style.setProperty("--vv-height", `${Math.round(vv.height)}px`);
    this.env.root.style.setProperty("--vv-top", `${Math.round(vv.offsetTop)}px`);
  }
}
