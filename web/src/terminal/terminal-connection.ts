import { type Client, Code, ConnectError } from "@connectrpc/connect";
import { type AttachResponse, ExitCause, type TerminalStream } from "../../../gen/staragent/v1/terminal_stream_pb.js";
import { isNetworkFailure, isUnauthenticated } from "../api/errors.js";
import { type StreamState, StreamSupervisor } from "../state/stream-supervisor.js";
import { InputSender } from "./input-sender.js";

/** Acknowledge output at least this often (the contract asks for every 8 KiB processed). */
export const ACK_EVERY_BYTES = 8 * 1024;
/** ...and at least every this many chunks, so many tiny echoes do not pile up unacknowledged. */
const ACK_EVERY_CHUNKS = 256;
/**
 * Silence on the Attach stream after which it is treated as dead: the server sends a heartbeat after
 * 15 s without output, so 25 s is one missed heartbeat plus a margin for a slow network.
 */
export const ATTACH_LIVENESS_MS = 25_000;
/** History lines asked for on attach: the scrollback a person expects, bounded for tmux's sake. */
export const HISTORY_LINES = 2_000;

/** A size in cells. */
export interface CellSize {
  readonly cols: number;
  readonly rows: number;
}

/** Where a terminal view is drawn; implemented by the xterm.js view. */
export interface TerminalSink {
  /**
   * A new attachment: clear everything, keep `history` (the pane's recent lines, the last
   * `screenLines` of which were its screen) as scrollback, then show live output.
   */
  attached(info: {
    history: Uint8Array;
    screenLines: number;
    windowSize: CellSize;
    sizeOwner: boolean;
    otherClients: number;
  }): void;
  /** Live output; call `done` once it is written, which is what acknowledgements count. */
  output(data: Uint8Array, done: () => void): void;
  /** The window size or this viewer's ownership of it changed. */
  resized(windowSize: CellSize, sizeOwner: boolean): void;
}

/** Where a terminal connection is, for people. */
export type TerminalState =
  | { readonly kind: "connecting"; readonly attempt: number }
  | { readonly kind: "attached" }
  | { readonly kind: "waiting"; readonly retryAt: number; readonly attempt: number; readonly error: unknown }
  /** The session ended, or tmux detached this viewer: not reconnected on its own. */
  | { readonly kind: "ended"; readonly reason: string; readonly sessionEnded: boolean }
  /** Attaching cannot work (no such session, too many attachments, refused login). */
  | { readonly kind: "failed"; readonly error: unknown };

/** What a terminal connection is built from. */
export interface TerminalConnectionOptions {
  readonly client: Client<typeof TerminalStream>;
  /** The session's resource name. */
  readonly name: string;
  /** The viewer's size now, asked for when attaching. */
  readonly size: () => CellSize;
  readonly sink: TerminalSink;
  readonly onState: (state: TerminalState) => void;
  /** Typed bytes that may not have arrived, or were refused while disconnected. */
  readonly onInputProblem: (message: string) => void;
}

/**
 * One session's live terminal over the Hub: `Attach` for output (re-attached with backoff and a
 * liveness watchdog; each new attachment redraws from its history, so nothing is duplicated), input
 * through an InputSender (SendInput with sequence numbers, held until the attachment is confirmed),
 * acknowledgements as output is written, and size requests. DOM-free: the view is a TerminalSink.
 */
export class TerminalConnection {
  private readonly supervisor: StreamSupervisor<AttachResponse>;
  private readonly input: InputSender;
  private attachmentId: string | undefined;
  private unackedBytes = 0;
  private unackedChunks = 0;
  private ackInFlight = false;
  private ackWanted = 0;
  private stateNow: TerminalState = { kind: "connecting", attempt: 0 };
  private closed = false;

  constructor(private readonly options: TerminalConnectionOptions) {
    this.input = new InputSender(
      async (attachmentId, sequence, data) => {
        await options.client.sendInput({ attachmentId, sequence, data });
      },
      {
        lost: (bytes, error) =>
          options.onInputProblem(
            `${bytes} typed byte${bytes === 1 ? "" : "s"} may not have reached the session (${
              error instanceof Error ? error.message : String(error)
            }).`,
          ),
        refused: (bytes) =>
          options.onInputProblem(
            `${bytes} bytes were not sent: too much input is waiting for the connection to come back.`,
          ),
      },
      (error) => isNetworkFailure(error) || (error instanceof ConnectError && error.code === Code.Unavailable),
    );
    this.supervisor = new StreamSupervisor({
      open: (signal) => {
        const size = options.size();
        return options.client.attach(
          { name: options.name, cols: size.cols, rows: size.rows, historyLines: HISTORY_LINES },
          { signal },
        );
      },
      onMessage: (message) => this.onEvent(message),
      onState: (state) => this.onStreamState(state),
      isFatal: (error) => isFatalAttachError(error),
      livenessMs: ATTACH_LIVENESS_MS,
    });
  }

  get state(): TerminalState {
    return this.stateNow;
  }

  /** Typed bytes not sent yet (held while connecting). */
  get pendingInputBytes(): number {
    return this.input.pendingBytes;
  }

  /** Attaches (and keeps re-attaching until closed). */
  start(): void {
    this.supervisor.start();
  }

  /** Drops the current attachment and attaches again now (after sleep, or when asked to). */
  reattach(): void {
    if (this.closed) return;
    if (this.supervisor.isRunning) this.supervisor.reconnectNow();
    else this.supervisor.start();
  }

  /** Types bytes into the session (held until an attachment is confirmed). */
  type(data: Uint8Array): void {
    this.input.push(data);
  }

  /**
   * Asks for a window size. A sole viewer's size is applied; otherwise the window keeps its size unless
   * `takeOver` is set. The answer (and any later change) reaches the sink's `resized`.
   */
  async resize(size: CellSize, takeOver = false): Promise<void> {
    const attachmentId = this.attachmentId;
    if (attachmentId === undefined) return;
    const res = await this.options.client.resizeTerminal({
      attachmentId,
      cols: size.cols,
      rows: size.rows,
      takeOver,
    });
    if (this.attachmentId === attachmentId && res.windowSize) {
      this.options.sink.resized({ cols: res.windowSize.cols, rows: res.windowSize.rows }, res.sizeOwner);
    }
  }

  /** Detaches for good, after the input already on its way has been delivered. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    const finish = () => {
      this.input.close();
      this.supervisor.stop();
    };
    if (this.input.busy) void this.input.idle().then(finish);
    else finish();
  }

  private onEvent(message: AttachResponse): undefined | "stop" {
    const event = message.event;
    switch (event.case) {
      case "attached": {
        const a = event.value;
        this.attachmentId = a.attachmentId;
        this.unackedBytes = 0;
        this.unackedChunks = 0;
        this.ackWanted = 0;
        this.options.sink.attached({
          history: a.history,
          screenLines: a.historyScreenLines,
          windowSize: { cols: a.windowSize?.cols ?? 80, rows: a.windowSize?.rows ?? 24 },
          sizeOwner: a.sizeOwner,
          otherClients: a.otherClients,
        });
        this.setState({ kind: "attached" });
        this.input.attached(a.attachmentId);
        return undefined;
      }
      case "output": {
        const { sequence, data } = event.value;
        const attachmentId = this.attachmentId;
        this.options.sink.output(data, () => this.processed(attachmentId, sequence, data.length));
        return undefined;
      }
      case "resized": {
        const size = event.value.windowSize;
        if (size) this.options.sink.resized({ cols: size.cols, rows: size.rows }, event.value.sizeOwner);
        return undefined;
      }
      case "exited": {
        this.attachmentId = undefined;
        this.input.detached();
        const { reason, sessionEnded, cause } = event.value;
        if (sessionEnded || cause === ExitCause.SESSION_ENDED || cause === ExitCause.CLIENT_DETACHED) {
          this.setState({ kind: "ended", reason, sessionEnded });
          return "stop";
        }
        // The server stopping, or this viewer's stream detached: the stream ends next and the supervisor
        // attaches again.
        return undefined;
      }
      default:
        return undefined;
    }
  }

  private processed(attachmentId: string | undefined, sequence: number, bytes: number): void {
    if (attachmentId === undefined || attachmentId !== this.attachmentId) return;
    this.unackedBytes += bytes;
    this.unackedChunks++;
    if (this.unackedBytes >= ACK_EVERY_BYTES || this.unackedChunks >= ACK_EVERY_CHUNKS) {
      this.unackedBytes = 0;
      this.unackedChunks = 0;
      this.ack(attachmentId, sequence);
    }
  }

  /** Acknowledgements are cumulative: one call at a time, the newest sequence wins. */
  private ack(attachmentId: string, sequence: number): void {
    this.ackWanted = Math.max(this.ackWanted, sequence);
    if (this.ackInFlight) return;
    this.ackInFlight = true;
    const send = async () => {
      while (this.attachmentId === attachmentId) {
        const target = this.ackWanted;
        try {
          await this.options.client.ackOutput({ attachmentId, sequence: target });
        } catch {
          // A lost acknowledgement is repaired by the next one; a dead attachment is re-attached.
        }
        if (this.ackWanted <= target) break;
      }
      this.ackInFlight = false;
    };
    void send();
  }

  private onStreamState(state: StreamState): void {
    switch (state.kind) {
      case "connecting":
        this.attachmentId = undefined;
        this.input.detached();
        this.setState({ kind: "connecting", attempt: state.attempt });
        return;
      case "waiting":
        this.attachmentId = undefined;
        this.input.detached();
        this.setState({ kind: "waiting", retryAt: state.retryAt, attempt: state.attempt, error: state.error });
        return;
      case "stopped":
        this.attachmentId = undefined;
        this.input.detached();
        if (state.error !== undefined) this.setState({ kind: "failed", error: state.error });
        return;
      case "live":
        return;
    }
  }

  private setState(state: TerminalState): void {
    this.stateNow = state;
    this.options.onState(state);
  }
}

/** Errors after which attaching again cannot help until something changes. */
function isFatalAttachError(error: unknown): boolean {
  if (isUnauthenticated(error)) return true;
  if (!(error instanceof ConnectError)) return false;
  return [
    Code.NotFound,
    Code.InvalidArgument,
    Code.PermissionDenied,
    Code.ResourceExhausted,
    Code.FailedPrecondition,
  ].includes(error.code);
}
