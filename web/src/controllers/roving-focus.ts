import type { ReactiveController, ReactiveControllerHost } from "lit";

/**
 * Where a key moves the focus in a list of `count` items from position `pos`: arrows (and j/k) by
 * one, PageUp/PageDown by `page`, Home/End to the ends. Undefined for any other key.
 */
export function rovingStep(key: string, pos: number, count: number, page: number): number | undefined {
  const last = count - 1;
  switch (key) {
    case "ArrowDown":
    case "j":
      return Math.min(last, pos + 1);
    case "ArrowUp":
    case "k":
      return Math.max(0, pos - 1);
    case "PageDown":
      return Math.min(last, pos + page);
    case "PageUp":
      return Math.max(0, pos - page);
    case "Home":
      return 0;
    case "End":
      return last;
    default:
      return undefined;
  }
}

/**
 * A roving tab stop: one item of a list (by key) is the one Tab reaches, and moving it with the keyboard
 * moves the focus there after the host renders the item (a virtualized list renders it only then).
 */
export class RovingFocusController implements ReactiveController {
  private key = "";
  private focusPending = false;

  /** @param find the rendered element of an item that takes the focus, if it is rendered */
  constructor(
    private readonly host: ReactiveControllerHost,
    private readonly find: (key: string) => HTMLElement | null,
  ) {
    host.addController(this);
  }

  /** The item Tab reaches ("" before any). */
  get activeKey(): string {
    return this.key;
  }

  /** Makes an item the tab stop without moving the focus (a click, a selection). */
  set activeKey(key: string) {
    if (key === this.key) return;
    this.key = key;
    this.host.requestUpdate();
  }

  /** Makes an item the tab stop and moves the focus to it once it is rendered. */
  focus(key: string): void {
    this.key = key;
    this.focusPending = true;
    this.host.requestUpdate();
  }

  hostUpdated(): void {
    if (!this.focusPending) return;
    this.focusPending = false;
    this.find(this.key)?.focus({ preventScroll: true });
  }
}
