import type { Logger } from "../../common/log.js";
import type { TmuxClient } from "../tmux/client.js";
import { SIZE_POLL_INTERVAL_MS } from "./limits.js";
import type { SessionTerminal } from "./session-terminal.js";
import { readAllSessionViews } from "./terminal-tmux.js";

/**
 * The slow poll that lets every session with attachments follow tmux clients that come and go
 * outside StarAgent: one tmux invocation every SIZE_POLL_INTERVAL_MS reads the clients and window
 * sizes of all sessions at once, then each session re-establishes its sizing invariant
 * (`SessionTerminal.followPoll`). One spawn a second for the whole machine, however many sessions are
 * viewed: a spawn stalls the event loop in proportion to the process's memory.
 */
export class SizePoll {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly tmux: TmuxClient,
    /** The sessions that have terminals now. */
    private readonly terminals: () => Iterable<SessionTerminal>,
    private readonly log: Logger,
  ) {}

  /**
   * True while a round is due or running; false once the poll has stopped by itself (no session has
   * attachments) or for good. Tests wait on it instead of sleeping through rounds.
   */
  get active(): boolean {
    return this.timer !== undefined;
  }

  /** Makes sure a poll is due (after an attach); it stops by itself once no session has attachments. */
  ensure(): void {
    if (this.timer || this.stopped) return;
    this.schedule();
  }

  /** Stops polling for good (the server is stopping). */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    this.timer = setTimeout(() => {
      void this.look().finally(() => {
        this.timer = undefined;
        if (!this.stopped && this.viewed().length > 0) this.schedule();
      });
    }, SIZE_POLL_INTERVAL_MS);
    this.timer.unref();
  }

  private viewed(): SessionTerminal[] {
    return [...this.terminals()].filter((t) => t.size > 0);
  }

  private async look(): Promise<void> {
    const viewed = this.viewed();
    if (viewed.length === 0) return;
    const marks = viewed.map((t) => t.pollMark());
    let views: Awaited<ReturnType<typeof readAllSessionViews>>;
    try {
      views = await readAllSessionViews(this.tmux);
    } catch (err) {
      this.log.warn("size poll failed", { error: err instanceof Error ? err.message : String(err) });
      return;
    }
    await Promise.all(
      viewed.map((t, i) =>
        t
          .followPoll(views.get(t.session), marks[i])
          .catch((err) => this.log.warn("size poll failed", { session: t.session, error: err })),
      ),
    );
  }
}
