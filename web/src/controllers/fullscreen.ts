import type { ReactiveController, ReactiveControllerHost } from "lit";

/** The Keyboard Lock API where the browser has it (Chromium). */
type KeyboardLock = { lock?: () => Promise<void>; unlock?: () => void };

/**
 * Full screen for the host element. Where the browser offers the Keyboard Lock API (Chromium),
 * shortcuts such as Ctrl+W, Ctrl+T and Ctrl+N then go to the page instead of closing or opening tabs.
 * `active` follows the document (Esc leaves full screen without the host being asked).
 */
export class FullscreenController implements ReactiveController {
  /** True while the host is the full-screen element. */
  active = false;

  constructor(
    private readonly host: ReactiveControllerHost & Element,
    private readonly options: {
      /** Entered or left (the host's size changed). */
      onChange(): void;
      /** Full screen was refused, with the browser's reason. */
      onError(message: string): void;
      /** After each toggle, whether it worked or not (the terminal takes the focus back). */
      after(): void;
    },
  ) {
    host.addController(this);
  }

  hostConnected(): void {
    document.addEventListener("fullscreenchange", this.changed);
  }

  hostDisconnected(): void {
    document.removeEventListener("fullscreenchange", this.changed);
  }

  /** Enters full screen, or leaves it. */
  async toggle(): Promise<void> {
    const keyboard = (navigator as Navigator & { keyboard?: KeyboardLock }).keyboard;
    try {
      if (document.fullscreenElement) {
        keyboard?.unlock?.();
        await document.exitFullscreen();
        return;
      }
      await this.host.requestFullscreen();
      await keyboard?.lock?.();
    } catch (err) {
      this.options.onError(`Full screen is not available here (${err instanceof Error ? err.message : String(err)}).`);
    } finally {
      this.options.after();
    }
  }

  private readonly changed = () => {
    this.active = document.fullscreenElement === this.host;
    this.host.requestUpdate();
    this.options.onChange();
  };
}
