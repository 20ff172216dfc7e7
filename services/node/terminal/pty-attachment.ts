import { setTimeout as delay } from "node:timers/promises";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import * as pty from "node-pty";
import { type AttachResponse, AttachResponseSchema, ExitCause } from "../../../gen/staragent/v1/terminal_stream_pb.js";
import { Disposables } from "../../common/disposables.js";
import type { KeyedLock } from "../../common/keyed-lock.js";
import type { Logger } from "../../common/log.js";
import { WakeSignal } from "../../common/wake-signal.js";
import { sessionTarget, type TmuxClient } from "../tmux/client.js";
import { OutputFlowControl } from "./flow-control.js";
import { InputSequencer } from "./input-sequencer.js";
import {
  HEARTBEAT_INTERVAL_MS,
  INPUT_GAP_WAIT_MS,
  MAX_OUTPUT_CHUNK_BYTES,
  MAX_PENDING_INPUTS,
  OUTPUT_HIGH_WATERMARK_BYTES,
  OUTPUT_LOW_WATERMARK_BYTES,
  PTY_EXIT_WAIT_MS,
} from "./limits.js";
import { PtyWriter } from "./pty-writer.js";
import { type CellSize, hasSession } from "./terminal-tmux.js";

/** The Escape byte; tmux waits its `escape-time` after a lone one before taking it as the key. */
const ESCAPE = 0x1b;
/** Time allowed beyond `escape-time` for tmux's timer to fire. */
const ESCAPE_MARGIN_MS = 50;

/** The terminal type the attached tmux client is told it runs in: what xterm.js emulates. */
const TERMINAL_NAME = "xterm-256color";

/** What one attachment is made of. */
export interface PtyAttachmentOptions {
  readonly id: string;
  /** The tmux session name. */
  readonly session: string;
  /** Who attached (the principal id); only they may drive it. */
  readonly owner: string;
  readonly readOnly: boolean;
  /** The size the viewer asked for. */
  readonly requested: CellSize;
  /** The size the pty starts with. */
  readonly initial: CellSize;
  /** Start as a client that does not count for the window's size. */
  readonly ignoreSize: boolean;
  readonly tmux: TmuxClient;
  readonly log: Logger;
  /**
   * The machine's per-session input lock (chat sends and prompt answers hold it while they type), so a
   * keystroke waits for them instead of landing inside a half-typed message or answer.
   */
  readonly inputLock?: KeyedLock;
}

/**
 * One viewer's attachment: a node-pty running `tmux attach-session` to the session (so tmux does the
 * rendering and the viewer gets the bytes a terminal would), its output flow control, its ordered
 * input, and the events a viewer receives. It ends when its tmux client exits (the session ended or
 * the client was detached) or when `close` is called; either way the pty and its listeners are gone
 * once `closed` resolves.
 */
export class PtyAttachment {
  readonly id: string;
  readonly session: string;
  readonly owner: string;
  readonly readOnly: boolean;
  /** The size the viewer last asked for (restored when it becomes the sole viewer again). */
  requested: CellSize;
  /** The pty's current size. */
  ptySize: CellSize;
  /** True while the tmux client does not count for the window's size. */
  ignoreSize: boolean;
  /** What this viewer was last told: the window size and whether it drives it. */
  reported: { size: CellSize; owner: boolean } | undefined;
  /** Ordered input (SendInput). */
  readonly input: InputSequencer;
  /** Resolves once the pty has exited and every listener is gone. */
  readonly closed: Promise<void>;

  private readonly term: pty.IPty;
  /** Writes the viewer's keystrokes and tells when they are in the client's terminal. */
  private readonly writer: PtyWriter;
  /** The tmux client's terminal (its `client_tty`), by which the tmux server detaches it. */
  private readonly clientTty: string;
  /** Set once `close` began: no keystroke is typed after it, so none can be taken and then lost. */
  private closing = false;
  private readonly flow: OutputFlowControl;
  private readonly pendingOutput: Buffer[] = [];
  /**
   * Events for the viewer, each with the count of output bytes read before it was queued: it is sent
   * after that output and before any later, so a `resized` lands between the output drawn at the old
   * size and the redraw at the new one.
   */
  private readonly control: { readonly event: AttachResponse; readonly afterBytes: number }[] = [];
  /** Output bytes read from the pty so far, and handed to the viewer so far. */
  private readBytes = 0;
  private takenBytes = 0;
  private outputSequence = 0;
  /** Woken by output, events and the end; the viewer loop waits on it. */
  private readonly work = new WakeSignal();
  private exitedNow = false;
  private closeReason: string | undefined;
  private closeCause = ExitCause.DETACHED;
  /** The pty's listeners, removed once it exits. */
  private readonly listeners = new Disposables();

  constructor(private readonly options: PtyAttachmentOptions) {
    this.id = options.id;
    this.session = options.session;
    this.owner = options.owner;
    this.readOnly = options.readOnly;
    this.requested = options.requested;
    this.ptySize = options.initial;
    this.ignoreSize = options.ignoreSize;
    const flags = [options.ignoreSize ? "ignore-size" : "", options.readOnly ? "read-only" : ""].filter(Boolean);
    const env = { ...options.tmux.environment, TERM: TERMINAL_NAME };
    this.term = pty.spawn(
      options.tmux.tmuxPath,
      options.tmux.argv([
        "attach-session",
        ...(flags.length > 0 ? ["-f", flags.join(",")] : []),
        "-t",
        sessionTarget(options.session),
      ]),
      { name: TERMINAL_NAME, cols: options.initial.cols, rows: options.initial.rows, env, encoding: null },
    );
    // node-pty's Unix terminal has these, outside its IPty interface: the master's descriptor and the
    // client side's path.
    const unix = this.term as pty.IPty & { readonly fd: number; readonly ptsName: string };
    this.writer = new PtyWriter(unix.fd);
    this.clientTty = unix.ptsName;
    this.flow = new OutputFlowControl({
      highWatermark: OUTPUT_HIGH_WATERMARK_BYTES,
      lowWatermark: OUTPUT_LOW_WATERMARK_BYTES,
      pause: () => this.term.pause(),
      resume: () => this.term.resume(),
    });
    this.input = new InputSequencer({
      write: (data) => this.write(Buffer.from(data.buffer, data.byteOffset, data.byteLength)),
      gapWaitMs: INPUT_GAP_WAIT_MS,
      maxPending: MAX_PENDING_INPUTS,
    });
    const onData = this.term.onData((data: string | Buffer) => {
      const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
      this.pendingOutput.push(bytes);
      this.readBytes += bytes.length;
      this.flow.received(bytes.length);
      this.wake();
    });
    this.listeners.add(() => onData.dispose());
    this.closed = new Promise<void>((resolve) => {
      const onExit = this.term.onExit(() => {
        this.exitedNow = true;
        this.writer.stop(
          new ConnectError(`attachment ${this.id} has ended before its input could be typed`, Code.NotFound),
        );
        this.listeners.dispose();
        void this.finish().then(resolve, resolve);
      });
      this.listeners.add(() => onExit.dispose());
    });
  }

  /**
   * Types a viewer's keystroke into the pty under the session's input lock (at once when it is free);
   * settles once the bytes are in the tmux client's terminal, where the tmux server reads them.
   */
  private write(bytes: Buffer): Promise<void> {
    const type = () => {
      if (this.exitedNow || this.closing) {
        throw new ConnectError(`attachment ${this.id} has ended before its input could be typed`, Code.NotFound);
      }
      return this.writer.write(bytes);
    };
    const lock = this.options.inputLock;
    if (!lock) return type();
    let written: Promise<void> | undefined;
    const waited = lock.runWhenFree(this.session, () => {
      written = type();
    });
    return waited ? waited.then(() => written) : (written as unknown as Promise<void>);
  }

  /** The tmux client's process id (as `list-clients` shows it). */
  get pid(): number {
    return this.term.pid;
  }

  /** True once the tmux client has exited. */
  get exited(): boolean {
    return this.exitedNow;
  }

  /** Output bytes read from the pty and not yet acknowledged by the viewer (bounded by flow control). */
  get unacknowledgedBytes(): number {
    return this.flow.unacknowledged;
  }

  /** True while output is paused for want of acknowledgements. */
  get paused(): boolean {
    return this.flow.paused;
  }

  /** The viewer processed output up to `sequence`. */
  ack(sequence: number): void {
    this.flow.ack(Math.min(sequence, this.outputSequence));
  }

  /** Resizes the pty (and so the tmux client). */
  resizePty(size: CellSize): void {
    if (this.exitedNow || (size.cols === this.ptySize.cols && size.rows === this.ptySize.rows)) return;
    this.ptySize = size;
    try {
      this.term.resize(size.cols, size.rows);
    } catch (err) {
      // The pty can close between the check and the call; its exit ends the attachment anyway.
      this.options.log.debug("resize of a closing pty", { attachment: this.id, error: err });
    }
  }

  /** Queues an event (a `resized`) for the viewer. */
  notify(event: AttachResponse): void {
    if (this.exitedNow) return;
    this.control.push({ event, afterBytes: this.readBytes });
    this.wake();
  }

  /**
   * The viewer's events after `attached`: output chunks (merged from queued pty reads, numbered from
   * 1), `resized`, heartbeats when quiet, and `exited` last. One consumer at a time; ends early when
   * `signal` aborts.
   */
  async *events(signal: AbortSignal): AsyncGenerator<AttachResponse> {
    for (;;) {
      this.work.take();
      if (signal.aborted) return;
      const next = this.control[0];
      if (this.pendingOutput.length > 0 && (!next || next.afterBytes > this.takenBytes)) {
        yield this.takeOutput(next ? next.afterBytes - this.takenBytes : MAX_OUTPUT_CHUNK_BYTES);
        continue;
      }
      const event = this.control.shift()?.event;
      if (event) {
        yield event;
        if (event.event.case === "exited") return;
        continue;
      }
      const woken = await this.work.wait(HEARTBEAT_INTERVAL_MS, signal);
      if (!woken && !signal.aborted) {
        yield create(AttachResponseSchema, {
          event: { case: "heartbeat", value: { lastSequence: this.outputSequence } },
        });
      }
    }
  }

  /**
   * Ends the attachment and resolves once its tmux client has exited. Keystrokes already acknowledged
   * are not lost: the tmux server first reads what was typed, then detaches the client (SIGHUP, then
   * SIGKILL, only if it lingers). `reason` is what the viewer is told.
   */
  async close(reason: string, cause: ExitCause = ExitCause.DETACHED): Promise<void> {
    if (this.closeReason === undefined) this.closeCause = cause;
    this.closeReason ??= reason;
    this.input.close(new ConnectError(`attachment ${this.id} has ended (${this.closeReason})`, Code.NotFound));
    if (this.exitedNow || this.closing) {
      await this.closed;
      return;
    }
    this.closing = true;
    // A paused pty would not notice its child's exit; reading again lets node-pty see it.
    this.term.resume();
    const hangUp = setTimeout(() => {
      if (!this.exitedNow) this.term.kill("SIGHUP");
    }, PTY_EXIT_WAIT_MS);
    const kill = setTimeout(() => {
      if (!this.exitedNow) this.term.kill("SIGKILL");
    }, 2 * PTY_EXIT_WAIT_MS);
    await this.detach().catch((err: unknown) => {
      this.options.log.debug("detach through tmux failed; hanging up the client", { attachment: this.id, error: err });
      if (!this.exitedNow) this.term.kill("SIGHUP");
    });
    await this.closed;
    clearTimeout(hangUp);
    clearTimeout(kill);
  }

  /**
   * Has the tmux server detach this client once it has read every keystroke typed. The server reads
   * a client's terminal whenever it is readable and queues the keys before it runs a command that came
   * in later, so `detach-client` run after the bytes are in the terminal comes after them. A hang-up
   * instead would end the client at once and drop what the server had not read yet. A lone Escape at
   * the end is held by tmux for its `escape-time` (to tell it from a key sequence's start): the detach
   * waits for that too.
   */
  private async detach(): Promise<void> {
    await Promise.race([this.writer.drained(), delay(PTY_EXIT_WAIT_MS / 2, undefined, { ref: false })]);
    const last = this.writer.last;
    if (last.byte === ESCAPE) {
      const held = Number((await this.options.tmux.query(["show-options", "-sv", "escape-time"])).trim());
      const left = last.at + (Number.isFinite(held) ? held : 0) - Date.now();
      if (left > 0) await delay(Math.min(left + ESCAPE_MARGIN_MS, PTY_EXIT_WAIT_MS / 2));
    }
    if (this.exitedNow) return;
    await this.options.tmux.run(["detach-client", "-t", this.clientTty]);
  }

  /** One output event of the bytes read first, at most `limit` (and MAX_OUTPUT_CHUNK_BYTES) of them. */
  private takeOutput(limit: number): AttachResponse {
    const parts: Buffer[] = [];
    let size = 0;
    const most = Math.min(limit, MAX_OUTPUT_CHUNK_BYTES);
    while (this.pendingOutput.length > 0) {
      const next = this.pendingOutput[0] as Buffer;
      const room = most - size;
      if (room <= 0) break;
      if (next.length > room) {
        parts.push(next.subarray(0, room));
        this.pendingOutput[0] = next.subarray(room);
        size += room;
        break;
      }
      parts.push(next);
      size += next.length;
      this.pendingOutput.shift();
    }
    this.outputSequence++;
    this.takenBytes += size;
    this.flow.sent(this.outputSequence, size);
    return create(AttachResponseSchema, {
      event: {
        case: "output",
        value: {
          sequence: this.outputSequence,
          data: parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts),
        },
      },
    });
  }

  private async finish(): Promise<void> {
    const sessionEnded = this.closeReason === undefined && !(await hasSession(this.options.tmux, this.session));
    const reason = this.closeReason ?? (sessionEnded ? "session ended" : "tmux client detached");
    const cause =
      this.closeReason !== undefined
        ? this.closeCause
        : sessionEnded
          ? ExitCause.SESSION_ENDED
          : ExitCause.CLIENT_DETACHED;
    this.input.close(new ConnectError(`attachment ${this.id} has ended (${reason})`, Code.NotFound));
    this.control.push({
      event: create(AttachResponseSchema, { event: { case: "exited", value: { reason, sessionEnded, cause } } }),
      afterBytes: this.readBytes,
    });
    this.wake();
  }

  private wake(): void {
    this.work.wake();
  }
}
