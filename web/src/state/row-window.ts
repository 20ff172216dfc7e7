import type { ListDensity } from "./list-view.js";
import type { ListRow } from "./session-filter.js";

/** Row heights in pixels; fixed so the list can be virtualized without measuring. */
export const ROW_HEIGHTS: Record<ListRow["kind"], number> = { node: 44, system: 30, folder: 32, session: 72 };
/** A session row's height in the compact density: one line. */
export const COMPACT_SESSION_ROW = 36;
/** Extra height of a session row showing its pending prompt's one line and choices (sa-prompt-card). */
export const PROMPT_ROW_EXTRA = 52;

/** A row's height: its kind's (in the density), plus the prompt line of a session waiting on a prompt read in full. */
export function rowHeight(row: ListRow, density: ListDensity = "comfortable"): number {
  const prompt = row.kind === "session" && (row.session.pendingPrompt?.choices.length ?? 0) > 0;
  const base = row.kind === "session" && density === "compact" ? COMPACT_SESSION_ROW : ROW_HEIGHTS[row.kind];
  return base + (prompt ? PROMPT_ROW_EXTRA : 0);
}

/** Pixels rendered above and below the visible part, so fast scrolling shows no gaps. */
export const OVERSCAN_PX = 360;

/**
 * The session list's rows laid out for virtualization: each row's top from the fixed row heights, its
 * position among the session rows (for aria-posinset), and which rows a scroll position shows. Only the
 * rows in view (plus an overscan) are rendered, a few dozen whatever the count. DOM-free.
 */
export class RowWindow {
  /** The top of each row, and the total height last. */
  private readonly offsets: number[];
  /** For each row, its position among the session rows (1-based; 0 for headers). */
  private readonly positions: number[];
  /** The indexes of the session rows, in order. */
  readonly sessionIndexes: readonly number[];

  constructor(
    readonly rows: readonly ListRow[],
    readonly density: ListDensity = "comfortable",
  ) {
    const offsets = new Array<number>(rows.length + 1);
    offsets[0] = 0;
    let top = 0;
    rows.forEach((r, i) => {
      top += rowHeight(r, density);
      offsets[i + 1] = top;
    });
    this.offsets = offsets;
    let position = 0;
    this.positions = rows.map((r) => (r.kind === "session" ? ++position : 0));
    this.sessionIndexes = rows.flatMap((r, i) => (r.kind === "session" ? [i] : []));
  }

  /** The height of every row together. */
  get totalHeight(): number {
    return this.offsets[this.rows.length] ?? 0;
  }

  /** How many session rows there are. */
  get sessionCount(): number {
    return this.sessionIndexes.length;
  }

  /** The key of the first session row ("" when none). */
  get firstSessionKey(): string {
    const i = this.sessionIndexes[0];
    return i === undefined ? "" : (this.rows[i]?.key ?? "");
  }

  /** The height of row `index` in pixels. */
  height(index: number): number {
    return (this.offsets[index + 1] ?? 0) - (this.offsets[index] ?? 0);
  }

  /** The top of row `index` in pixels. */
  top(index: number): number {
    return this.offsets[index] ?? 0;
  }

  /** The position of row `index` among the session rows (1-based; 0 for a header). */
  position(index: number): number {
    return this.positions[index] ?? 0;
  }

  /** The index of the row with this key, or -1. */
  indexOf(key: string): number {
    return this.rows.findIndex((r) => r.key === key);
  }

  /** The rows to render, [first, last), for a scroll position and a viewport height. */
  visibleRange(scrollTop: number, viewportHeight: number): [number, number] {
    const top = Math.max(0, scrollTop - OVERSCAN_PX);
    const bottom = scrollTop + viewportHeight + OVERSCAN_PX;
    const first = Math.max(0, this.indexAt(top));
    let last = first;
    while (last < this.rows.length && this.top(last) < bottom) last++;
    return [first, last];
  }

  /** The row at a pixel offset (binary search over the row tops). */
  indexAt(y: number): number {
    let lo = 0;
    let hi = this.rows.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.top(mid) <= y) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /**
   * The scroll position that brings row `index` into a viewport (`scrollTop`, `height`), or the same
   * position when it is in view. Scrolling up for a selection leaves its node header in view too; the
   * keyboard moves only as far as needed.
   */
  revealScroll(index: number, scrollTop: number, height: number, keyboard: boolean): number {
    const row = this.rows[index];
    if (!row) return scrollTop;
    const top = this.top(index);
    const bottom = top + rowHeight(row, this.density);
    if (top < scrollTop) return Math.max(0, top - (keyboard ? 0 : ROW_HEIGHTS.node));
    if (bottom > scrollTop + height) return bottom - height;
    return scrollTop;
  }

  /**
   * Where the keyboard focus goes when the focused row `key` is not among `next` rows (opened and seen
   * under the review filter, stopped, filtered out): the session row that took its place, or the last
   * one. Undefined when the row is still there or no session row is left.
   */
  replacementFor(key: string, next: RowWindow): string | undefined {
    if (next.indexOf(key) >= 0) return undefined;
    const gone = this.indexOf(key);
    const at = next.sessionIndexes.find((i) => i >= gone) ?? next.sessionIndexes[next.sessionIndexes.length - 1];
    return at === undefined ? undefined : next.rows[at]?.key;
  }
}
