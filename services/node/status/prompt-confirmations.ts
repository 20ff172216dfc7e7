/** What was last read of one pane's prompt. */
interface PromptRead {
  readonly fingerprint: string;
  readonly capture: number;
  readonly confirmed: boolean;
  /** Looks in a row whose prompt no second capture has confirmed yet. */
  readonly unconfirmedLooks: number;
}

/**
 * How a look's prompt stands: `confirmed` (read alike from two captures: publish it whole), `new` (not
 * yet: the session keeps what it showed before for this look), or `unsettled` (still changing after a
 * look: the session shows that it waits, without the prompt's details).
 */
export type PromptStanding = "confirmed" | "new" | "unsettled";

/**
 * A prompt's fingerprint is published only once two captures of the screen agree on it. A program
 * draws a dialog in several writes (opencode draws an edit's title before its diff), and a capture
 * taken between them reads as a prompt of its own; a fingerprint from such a capture would be refused
 * by AnswerPrompt, which reads the finished screen. The second capture costs one more tmux read per
 * prompt shown, about one watch interval later.
 */
export class PromptConfirmations {
  private readonly panes = new Map<string, PromptRead>();

  /** Records that the pane's prompt with `fingerprint` was read from `capture`, and how it stands. */
  confirm(paneId: string, fingerprint: string, capture: number): PromptStanding {
    const before = this.panes.get(paneId);
    const confirmed =
      before !== undefined && before.fingerprint === fingerprint && (before.confirmed || before.capture !== capture);
    const unconfirmedLooks = confirmed ? 0 : (before?.unconfirmedLooks ?? 0) + 1;
    this.panes.set(paneId, { fingerprint, capture, confirmed, unconfirmedLooks });
    return confirmed ? "confirmed" : unconfirmedLooks === 1 ? "new" : "unsettled";
  }

  /** The pane shows no prompt: the next one starts unconfirmed. */
  forget(paneId: string): void {
    this.panes.delete(paneId);
  }

  /** Forgets the panes not in `live`. */
  prune(live: ReadonlySet<string>): void {
    for (const id of this.panes.keys()) if (!live.has(id)) this.panes.delete(id);
  }
}
