/**
 * The terminal's tuning numbers and input limits, in one place so the contract's limits
 * (terminal_stream.proto) and the flow-control marks are easy to find and to change together.
 */

/** Most bytes one SendInput call may type: bounds memory per call (a paste larger than this is split). */
export const MAX_INPUT_BYTES = 64 * 1024;

/** Largest width or height accepted, in cells: tmux and xterm.js cope; larger is a client bug. */
export const MAX_TERMINAL_DIMENSION = 1000;

/** Attachments one session may have at once: each is a tmux client and a pty on the machine. */
export const MAX_ATTACHMENTS_PER_SESSION = 8;

/**
 * Attachments one caller may hold on a machine at once. A Hub is one caller for all its users (it
 * enforces its own per-user limit), so this is generous.
 */
export const MAX_ATTACHMENTS_PER_CALLER = 64;

/**
 * Unacknowledged output bytes above which an attachment's pty is paused. Inside the 100 to 256 KiB
 * the design asks for and under xterm.js's 500 KB advice, so a stalled viewer costs at most this.
 */
export const OUTPUT_HIGH_WATERMARK_BYTES = 128 * 1024;

/** Unacknowledged output bytes below which a paused pty resumes: low enough not to flap. */
export const OUTPUT_LOW_WATERMARK_BYTES = 16 * 1024;

/**
 * Sent but unacknowledged output chunks above which the pty is paused too: a viewer receiving many
 * tiny chunks and acknowledging none must not make the sequence bookkeeping grow without bound.
 */
export const MAX_UNACKED_CHUNKS = 4_096;

/** Largest output chunk sent in one message; queued pty reads are merged up to it. */
export const MAX_OUTPUT_CHUNK_BYTES = 64 * 1024;

/** A quiet attachment sends a heartbeat this often, so proxies and viewers know the stream lives. */
export const HEARTBEAT_INTERVAL_MS = 15_000;

/**
 * How long an input ahead of a gap in the sequence waits for the missing inputs before it fails.
 * Long enough for reordered HTTP requests to arrive, short enough that a lost one shows soon.
 */
export const INPUT_GAP_WAIT_MS = 2_000;

/** Inputs that may wait for a gap at once per attachment: bounds memory held by out-of-order calls. */
export const MAX_PENDING_INPUTS = 32;

/**
 * How often a session with attachments re-reads its tmux clients and window size, to follow size
 * changes made by others and to stop driving the size once another client attaches.
 */
export const SIZE_POLL_INTERVAL_MS = 1_000;

/**
 * How long a closing attachment waits for its tmux client to leave through `detach-client` before
 * hanging it up (SIGHUP), and again before SIGKILL.
 */
export const PTY_EXIT_WAIT_MS = 2_000;
