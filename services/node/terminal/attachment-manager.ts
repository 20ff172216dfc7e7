import { randomBytes } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import { ExitCause } from "../../../gen/staragent/v1/terminal_stream_pb.js";
import type { KeyedLock } from "../../common/keyed-lock.js";
import type { Logger } from "../../common/log.js";
import type { TmuxClient } from "../tmux/client.js";
import { MAX_ATTACHMENTS_PER_CALLER, MAX_ATTACHMENTS_PER_SESSION } from "./limits.js";
import type { PtyAttachment } from "./pty-attachment.js";
import { type AttachOptions, SessionTerminal, type SizeOutcome } from "./session-terminal.js";
import { SizePoll } from "./size-poll.js";
import type { CellSize } from "./terminal-tmux.js";

/** Bytes of randomness in an attachment id: unguessable, so ids are no weaker than the caller check. */
const ATTACHMENT_ID_BYTES = 16;

/** What the manager is built from. */
export interface AttachmentManagerOptions {
  readonly tmux: TmuxClient;
  readonly log: Logger;
  /** The machine's per-session input lock, shared with chat sends and prompt answers. */
  readonly inputLock?: KeyedLock;
  readonly maxPerSession?: number;
  readonly maxPerCaller?: number;
}

/** What a caller asks for when attaching. */
export type AttachInput = Omit<AttachOptions, "id" | "owner">;

/**
 * Every terminal attachment on one machine: creates them within the limits (per session and per
 * caller; RESOURCE_EXHAUSTED beyond), finds them by id for their owner only (NOT_FOUND for anyone
 * else, so ids of other callers cannot be probed), and ends them all when the server stops.
 */
export class AttachmentManager {
  private readonly byId = new Map<string, PtyAttachment>();
  private readonly sessions = new Map<string, SessionTerminal>();
  /** Attachments per caller, counting those being started. */
  private readonly perCaller = new Map<string, number>();
  /** Attachments per session, counting those being started. */
  private readonly perSession = new Map<string, number>();
  private closing = false;
  private readonly sizePoll: SizePoll;

  constructor(private readonly options: AttachmentManagerOptions) {
    this.sizePoll = new SizePoll(options.tmux, () => this.sessions.values(), options.log);
  }

  /** True while the machine's size poll is due or running (`SizePoll.active`). */
  get sizePolling(): boolean {
    return this.sizePoll.active;
  }

  /** Open attachments (for tests and benchmarks: a bounded measure of what the machine holds). */
  get count(): number {
    return this.byId.size;
  }

  /** Attaches `owner` to `session`. */
  async attach(
    session: string,
    owner: string,
    input: AttachInput,
  ): Promise<{ attachment: PtyAttachment; outcome: SizeOutcome }> {
    if (this.closing) throw new ConnectError("the server is stopping", Code.Unavailable);
    const maxSession = this.options.maxPerSession ?? MAX_ATTACHMENTS_PER_SESSION;
    const maxCaller = this.options.maxPerCaller ?? MAX_ATTACHMENTS_PER_CALLER;
    if ((this.perSession.get(session) ?? 0) >= maxSession) {
      throw new ConnectError(
        `session ${session} already has ${maxSession} terminal attachments, the most one session may have; close one first`,
        Code.ResourceExhausted,
      );
    }
    if ((this.perCaller.get(owner) ?? 0) >= maxCaller) {
      throw new ConnectError(
        `this caller already holds ${maxCaller} terminal attachments on this machine, the most one caller may hold (a Hub counts as one caller for all its users); close one first`,
        Code.ResourceExhausted,
      );
    }
    bump(this.perSession, session, 1);
    bump(this.perCaller, owner, 1);
    let terminal = this.sessions.get(session);
    if (!terminal) {
      terminal = new SessionTerminal(session, this.options.tmux, this.options.log, this.options.inputLock);
      this.sessions.set(session, terminal);
    }
    const id = randomBytes(ATTACHMENT_ID_BYTES).toString("base64url");
    try {
      const result = await terminal.attach({ ...input, id, owner });
      this.byId.set(id, result.attachment);
      this.sizePoll.ensure();
      void result.attachment.closed.then(() => this.release(id, session, owner));
      return result;
    } catch (err) {
      this.release(undefined, session, owner);
      throw err;
    }
  }

  /** The attachment `id` if `owner` holds it; NOT_FOUND otherwise. */
  get(id: string, owner: string): PtyAttachment {
    const attachment = this.byId.get(id);
    if (!attachment || attachment.owner !== owner || attachment.exited) {
      throw new ConnectError(`attachment ${truncate(id)} not found (it ended, or is not yours)`, Code.NotFound);
    }
    return attachment;
  }

  /** Applies a size request of `attachment`'s viewer. */
  resize(attachment: PtyAttachment, size: CellSize, takeOver: boolean): Promise<SizeOutcome> {
    const terminal = this.sessions.get(attachment.session);
    if (!terminal) throw new ConnectError(`attachment ${attachment.id} has ended`, Code.NotFound);
    return terminal.resize(attachment, size, takeOver);
  }

  /** Ends every attachment ("server stopping") and refuses new ones. */
  async close(): Promise<void> {
    this.closing = true;
    this.sizePoll.stop();
    await Promise.all([...this.sessions.values()].map((s) => s.closeAll("server stopping", ExitCause.SERVER_STOPPING)));
  }

  private release(id: string | undefined, session: string, owner: string): void {
    if (id !== undefined) this.byId.delete(id);
    bump(this.perSession, session, -1);
    bump(this.perCaller, owner, -1);
    const terminal = this.sessions.get(session);
    if ((this.perSession.get(session) ?? 0) === 0 && terminal && terminal.size === 0) this.sessions.delete(session);
  }
}

function bump(map: Map<string, number>, key: string, by: number): void {
  const next = (map.get(key) ?? 0) + by;
  if (next <= 0) map.delete(key);
  else map.set(key, next);
}

function truncate(value: string): string {
  return value.length > 40 ? `${value.slice(0, 40)}…` : value;
}
