import { setTimeout as delay } from "node:timers/promises";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { AttachResponseSchema, ExitCause } from "../../../gen/staragent/v1/terminal_stream_pb.js";
import type { KeyedLock } from "../../common/keyed-lock.js";
import type { Logger } from "../../common/log.js";
import type { TmuxClient } from "../tmux/client.js";
import { PtyAttachment } from "./pty-attachment.js";
import { decideSize } from "./sizing-policy.js";
import {
  type CellSize,
  forceWindowSize,
  readSessionView,
  redrawClient,
  releaseWindowSize,
  type SessionView,
  setIgnoreSize,
} from "./terminal-tmux.js";

/** How long a new attachment waits for its tmux client to show in `list-clients`. */
const CLIENT_APPEAR_TIMEOUT_MS = 5_000;
/** How often it looks meanwhile. */
const CLIENT_APPEAR_POLL_MS = 15;

/** What a new attachment asks for. */
export interface AttachOptions {
  readonly id: string;
  readonly owner: string;
  readonly size: CellSize;
  readonly takeOver: boolean;
  readonly readOnly: boolean;
}

/** The outcome of a size request: the window's size and whether this viewer drives it. */
export interface SizeOutcome {
  readonly windowSize: CellSize;
  readonly sizeOwner: boolean;
  /** tmux clients attached besides this viewer's. */
  readonly otherClients: number;
}

/**
 * The attachments of one tmux session and its sizing policy (docs/terminal.md "Sizing", `sizing-policy.ts`). It
 * keeps one invariant, re-established after every attach, resize and detach and on the machine's slow
 * size poll (`SizePoll`, to follow clients that come and go outside StarAgent):
 * - an attachment that took the size over drives it (the window is set to its size, `manual`);
 * - otherwise, a viewer that is the session's only client drives it (its tmux client counts for the
 *   size and has the viewer's size);
 * - every other attachment's tmux client has the `ignore-size` flag and the window's size, so it
 *   never shrinks or grows the window under the others.
 * Sizing work is serialised per session so concurrent calls cannot interleave tmux commands.
 */
export class SessionTerminal {
  private readonly attachments = new Set<PtyAttachment>();
  private manualOwner: PtyAttachment | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  /** Sizing operations (attach, resize, detach) begun; a view read since none began is current. */
  private operations = 0;
  /** True while one runs: a view read meanwhile may show it half done. */
  private operating = false;

  constructor(
    readonly session: string,
    private readonly tmux: TmuxClient,
    private readonly log: Logger,
    /** The machine's per-session input lock, taken by every keystroke (PtyAttachmentOptions.inputLock). */
    private readonly inputLock?: KeyedLock,
  ) {}

  /** Attachments open on this session. */
  get size(): number {
    return this.attachments.size;
  }

  /**
   * Starts an attachment: spawns its tmux client sized by the policy and waits until tmux lists it.
   * NOT_FOUND when the session does not exist (or ends meanwhile).
   */
  attach(options: AttachOptions): Promise<{ attachment: PtyAttachment; outcome: SizeOutcome }> {
    return this.operation(async () => {
      const view = await readSessionView(this.tmux, this.session);
      if (!view) throw sessionNotFound(this.session);
      const decision = decideSize(view.clients.length, options.takeOver);
      const drives = decision !== "keep";
      const attachment = new PtyAttachment({
        id: options.id,
        session: this.session,
        owner: options.owner,
        readOnly: options.readOnly,
        requested: options.size,
        initial: drives ? options.size : view.size,
        ignoreSize: !drives,
        tmux: this.tmux,
        log: this.log,
        ...(this.inputLock ? { inputLock: this.inputLock } : {}),
      });
      let after: SessionView;
      try {
        after = await this.waitForClient(attachment);
      } catch (err) {
        await attachment.close("attach failed", ExitCause.ATTACH_FAILED);
        throw err;
      }
      this.attachments.add(attachment);
      void attachment.closed.then(() => this.forget(attachment));
      if (decision === "take-over") {
        this.manualOwner = attachment;
        await forceWindowSize(this.tmux, this.session, options.size, after.statusLines);
      }
      const outcome = await this.enforce(after, attachment);
      this.log.info("attached", { attachment: attachment.id, session: this.session, decision });
      return { attachment, outcome };
    });
  }

  /** Applies a viewer's size request under the policy. */
  resize(attachment: PtyAttachment, size: CellSize, takeOver: boolean): Promise<SizeOutcome> {
    return this.operation(async () => {
      attachment.requested = size;
      const view = await readSessionView(this.tmux, this.session);
      if (!view || attachment.exited) throw new ConnectError(`attachment ${attachment.id} has ended`, Code.NotFound);
      const others = view.clients.filter((c) => c.pid !== attachment.pid).length;
      const decision = decideSize(others, takeOver);
      if (decision === "take-over") {
        this.manualOwner = attachment;
        await forceWindowSize(this.tmux, this.session, size, view.statusLines);
      } else if (decision === "follow" && this.manualOwner) {
        this.manualOwner = undefined;
        await releaseWindowSize(this.tmux, this.session);
      }
      return this.enforce(view, attachment);
    });
  }

  /** Ends every attachment of this session. */
  async closeAll(reason: string, cause: ExitCause): Promise<void> {
    await Promise.all([...this.attachments].map((a) => a.close(reason, cause)));
  }

  private async forget(attachment: PtyAttachment): Promise<void> {
    this.attachments.delete(attachment);
    await this.operation(async () => {
      if (this.manualOwner === attachment) {
        this.manualOwner = undefined;
        await releaseWindowSize(this.tmux, this.session).catch(() => undefined);
      }
      if (this.attachments.size === 0) return;
      const view = await readSessionView(this.tmux, this.session);
      if (view) await this.enforce(view, undefined);
    }).catch((err) => this.log.warn("resizing after a detach failed", { session: this.session, error: err }));
  }

  /**
   * Re-establishes the invariant over `view` and tells each attachment (except `quiet`, which learns
   * it from the caller) about a changed window size or ownership. Returns `quiet`'s outcome.
   */
  private async enforce(view: SessionView, quiet: PtyAttachment | undefined): Promise<SizeOutcome> {
    const ours = [...this.attachments].filter((a) => !a.exited && view.clients.some((c) => c.pid === a.pid));
    if (this.manualOwner && !ours.includes(this.manualOwner)) this.manualOwner = undefined;
    const driver = this.manualOwner ?? (view.clients.length === 1 ? ours[0] : undefined);
    const windowSize = driver ? driver.requested : view.size;
    for (const a of ours) {
      const drives = a === driver;
      const client = view.clients.find((c) => c.pid === a.pid);
      if (client && client.ignoreSize === drives) await setIgnoreSize(this.tmux, client.tty, !drives);
      a.ignoreSize = !drives;
      a.resizePty(drives ? a.requested : windowSize);
    }
    let outcome: SizeOutcome = { windowSize, sizeOwner: false, otherClients: view.clients.length };
    const resizedUnder: PtyAttachment[] = [];
    for (const a of this.attachments) {
      const owner = a === driver;
      const sized =
        a.reported !== undefined &&
        (a.reported.size.cols !== windowSize.cols || a.reported.size.rows !== windowSize.rows);
      const changed = !a.reported || a.reported.owner !== owner || sized;
      a.reported = { size: windowSize, owner };
      if (a === quiet) {
        outcome = { windowSize, sizeOwner: owner, otherClients: view.clients.filter((c) => c.pid !== a.pid).length };
      }
      // The caller learns a change from its answer too, but only a size change needs its stream: the
      // answer is not ordered with the stream, and what tmux drew at the new size can reach the viewer
      // first, written at the old size. So the stream says `resized`, in order, and a redraw follows.
      if (a === quiet ? sized : changed) {
        a.notify(
          create(AttachResponseSchema, {
            event: { case: "resized", value: { windowSize, sizeOwner: owner } },
          }),
        );
        if (sized) resizedUnder.push(a);
      }
    }
    // A viewer whose window changed size (another client took the size over, or it took it itself) is
    // drawn again whole after its `resized`: what tmux drew at the new size before could have reached
    // it first.
    for (const a of resizedUnder ?? []) {
      const client = view.clients.find((c) => c.pid === a.pid);
      if (client && !a.exited) await redrawClient(this.tmux, client.tty);
    }
    return outcome;
  }

  private async waitForClient(attachment: PtyAttachment): Promise<SessionView> {
    const deadline = Date.now() + CLIENT_APPEAR_TIMEOUT_MS;
    for (;;) {
      const view = await readSessionView(this.tmux, this.session);
      if (!view || attachment.exited) throw sessionNotFound(this.session);
      if (view.clients.some((c) => c.pid === attachment.pid)) return view;
      if (Date.now() > deadline) {
        throw new ConnectError(`tmux did not attach a client to ${this.session} in time`, Code.Unavailable);
      }
      await delay(CLIENT_APPEAR_POLL_MS);
    }
  }

  /**
   * What the size poll notes before it reads tmux, to hand back with the view it read: undefined
   * while a sizing operation runs (the view could show it half done).
   */
  pollMark(): number | undefined {
    return this.operating ? undefined : this.operations;
  }

  /**
   * Re-establishes the invariant over a view the size poll read (with `mark` noted before), unless a
   * sizing operation began since: that one enforced a fresher view, and the next poll reads again.
   */
  followPoll(view: SessionView | undefined, mark: number | undefined): Promise<void> {
    return this.serialised(async () => {
      if (mark === undefined || mark !== this.operations || !view || this.attachments.size === 0) return;
      await this.enforce(view, undefined);
    });
  }

  private operation<T>(work: () => Promise<T>): Promise<T> {
    return this.serialised(async () => {
      this.operations++;
      this.operating = true;
      try {
        return await work();
      } finally {
        this.operating = false;
      }
    });
  }

  private serialised<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => undefined);
    return run;
  }
}

/** NOT_FOUND for a session this machine does not have. */
export function sessionNotFound(session: string): ConnectError {
  return new ConnectError(`session ${session} not found on this machine`, Code.NotFound);
}
