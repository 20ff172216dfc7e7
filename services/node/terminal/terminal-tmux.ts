import { NEXT_COMMAND, sessionTarget, type TmuxClient, TmuxError } from "../tmux/client.js";
import { type RecordFormat, recordFormat } from "../tmux/format-records.js";

/** A size in cells, as a terminal (a tmux client) sees it. */
export interface CellSize {
  readonly cols: number;
  readonly rows: number;
}

/** One tmux client attached to a session. */
export interface TmuxClientInfo {
  /** The client process (for our attachments, the pid node-pty spawned). */
  readonly pid: number;
  /** Its terminal, the name `refresh-client -t` takes. */
  readonly tty: string;
  /** True when the client does not count for the window's size. */
  readonly ignoreSize: boolean;
}

/** What a session's terminal looks like right now. */
export interface SessionView {
  readonly clients: readonly TmuxClientInfo[];
  /**
   * The terminal size that shows the session's current window whole: the window plus tmux's status
   * lines. A sole client of this size leaves the window as it is.
   */
  readonly size: CellSize;
  /** Lines tmux's status bar takes (0 when `status` is off). */
  readonly statusLines: number;
}

/** The formats of `readSessionView`'s two queries, made fresh for each invocation. */
export interface SessionViewFormats {
  readonly clients: RecordFormat;
  readonly window: RecordFormat;
}

/** New formats for one `readSessionView` invocation. */
export function sessionViewFormats(): SessionViewFormats {
  return {
    clients: recordFormat(["#{client_pid}", "#{client_tty}", "#{client_flags}"]),
    window: recordFormat(["#{window_width}", "#{window_height}", "#{status}"]),
  };
}

/** The session's window target: its current window, by exact session name. */
function windowTarget(session: string): string {
  return `${sessionTarget(session)}:`;
}

/**
 * Reads a session's clients and window size in one tmux invocation; undefined when the session does
 * not exist.
 */
export async function readSessionView(tmux: TmuxClient, session: string): Promise<SessionView | undefined> {
  const formats = sessionViewFormats();
  let out: string;
  try {
    out = await tmux.run([
      "list-clients",
      "-t",
      sessionTarget(session),
      "-F",
      formats.clients.format,
      NEXT_COMMAND,
      "display-message",
      "-p",
      "-t",
      windowTarget(session),
      formats.window.format,
    ]);
  } catch (err) {
    if (err instanceof TmuxError && err.isNotFound) return undefined;
    throw err;
  }
  return parseSessionView(out, formats);
}

/** Parses the output of `readSessionView`'s command; exported for tests. */
export function parseSessionView(out: string, formats: SessionViewFormats): SessionView | undefined {
  const clients = formats.clients.parse(out).flatMap(([pid = "", tty = "", flags = ""]) => clientInfo(pid, tty, flags));
  const [cols = "", rows = "", status = ""] = formats.window.parse(out)[0] ?? [];
  return sessionView(clients, cols, rows, status);
}

/** The formats of `readAllSessionViews`' two queries, made fresh for each invocation. */
export interface AllSessionViewFormats {
  readonly clients: RecordFormat;
  readonly windows: RecordFormat;
}

/** New formats for one `readAllSessionViews` invocation. */
export function allSessionViewFormats(): AllSessionViewFormats {
  return {
    clients: recordFormat(["#{session_name}", "#{client_pid}", "#{client_tty}", "#{client_flags}"]),
    windows: recordFormat(["#{session_name}", "#{window_active}", "#{window_width}", "#{window_height}", "#{status}"]),
  };
}

/**
 * What `readSessionView` reads, for every session of the server in one tmux invocation (the clients
 * of all sessions, and each session's current window): the size poll's one look for all the sessions
 * a machine has terminals on. A session with no window a terminal can be sized to is left out.
 */
export async function readAllSessionViews(tmux: TmuxClient): Promise<Map<string, SessionView>> {
  const formats = allSessionViewFormats();
  const out = await tmux.query([
    "list-clients",
    "-F",
    formats.clients.format,
    NEXT_COMMAND,
    "list-windows",
    "-a",
    "-F",
    formats.windows.format,
  ]);
  return parseAllSessionViews(out, formats);
}

/** Parses the output of `readAllSessionViews`' command; exported for tests. */
export function parseAllSessionViews(out: string, formats: AllSessionViewFormats): Map<string, SessionView> {
  const clients = new Map<string, TmuxClientInfo[]>();
  for (const [session = "", pid = "", tty = "", flags = ""] of formats.clients.parse(out)) {
    const list = clients.get(session) ?? [];
    list.push(...clientInfo(pid, tty, flags));
    clients.set(session, list);
  }
  const views = new Map<string, SessionView>();
  for (const [session = "", active = "", cols = "", rows = "", status = ""] of formats.windows.parse(out)) {
    if (active !== "1") continue;
    const view = sessionView(clients.get(session) ?? [], cols, rows, status);
    if (view) views.set(session, view);
  }
  return views;
}

/** A client from its formatted fields; none when tmux printed no process id. */
function clientInfo(pid: string, tty: string, flags: string): TmuxClientInfo[] {
  return /^\d+$/.test(pid) ? [{ pid: Number(pid), tty, ignoreSize: flags.split(",").includes("ignore-size") }] : [];
}

/** A session's view from its clients and its current window's formatted size and `status` option. */
function sessionView(
  clients: readonly TmuxClientInfo[],
  cols: string,
  rows: string,
  status: string,
): SessionView | undefined {
  // tmux prints whole numbers here; anything else is no window a terminal can be sized to.
  if (!/^[1-9]\d{0,5}$/.test(cols) || !/^[1-9]\d{0,5}$/.test(rows)) return undefined;
  const window = { cols: Number(cols), rows: Number(rows), statusLines: statusLines(status) };
  return {
    clients,
    size: { cols: window.cols, rows: window.rows + window.statusLines },
    statusLines: window.statusLines,
  };
}

/** Lines the `status` option takes: `on` is one, `off` none, `2` to `5` that many. */
function statusLines(value: string): number {
  if (value === "off" || value === "0") return 0;
  const n = Number(value);
  return Number.isInteger(n) && n > 1 ? n : 1;
}

/** A pane's captured history: its text, and how many of its last lines were the visible screen. */
export interface CapturedHistory {
  readonly history: Buffer;
  readonly screenLines: number;
}

/**
 * The pane's recent history and screen with escape sequences, bounded to `lines` lines of history
 * (an unbounded capture blocks the whole tmux server), with CRLF line ends for a terminal, and the
 * pane's height, read in the same tmux invocation so the two agree.
 */
export async function captureHistory(tmux: TmuxClient, session: string, lines: number): Promise<CapturedHistory> {
  const target = windowTarget(session);
  const out = await tmux.run([
    "capture-pane",
    "-p",
    "-e",
    "-S",
    `-${lines}`,
    "-t",
    target,
    NEXT_COMMAND,
    "display-message",
    "-p",
    "-t",
    target,
    "#{pane_height}",
  ]);
  const body = out.endsWith("\n") ? out.slice(0, -1) : out;
  const cut = body.lastIndexOf("\n");
  const height = Number(body.slice(cut + 1));
  const text = cut < 0 ? "" : body.slice(0, cut + 1);
  const captured = text === "" ? 0 : text.split("\n").length - 1;
  return {
    history: Buffer.from(text.replace(/\n/g, "\r\n"), "utf8"),
    screenLines: Number.isInteger(height) && height > 0 ? Math.min(height, captured) : 0,
  };
}

/** Sets whether a client counts for its window's size (`refresh-client -f [!]ignore-size`). */
export async function setIgnoreSize(tmux: TmuxClient, tty: string, ignore: boolean): Promise<void> {
  try {
    await tmux.run(["refresh-client", "-t", tty, "-f", ignore ? "ignore-size" : "!ignore-size"]);
  } catch (err) {
    // A client that has just gone (an attachment ending while another starts) has no size to keep.
    if (err instanceof TmuxError && err.isNotFound) return;
    throw err;
  }
}

/**
 * Redraws a client's whole terminal from tmux (`refresh-client -t`): after its viewer has been told of
 * a new size, so what it shows is drawn at that size rather than reflowed from the old one.
 */
export async function redrawClient(tmux: TmuxClient, tty: string): Promise<void> {
  try {
    await tmux.run(["refresh-client", "-t", tty]);
  } catch (err) {
    if (err instanceof TmuxError && err.isNotFound) return;
    throw err;
  }
}

/**
 * Sets the window to a terminal size (minus the status lines). tmux marks such a window `window-size
 * manual`, so clients stop changing it until `releaseWindowSize`.
 */
export async function forceWindowSize(
  tmux: TmuxClient,
  session: string,
  size: CellSize,
  status: number,
): Promise<void> {
  const rows = Math.max(1, size.rows - status);
  await tmux.run(["resize-window", "-t", windowTarget(session), "-x", String(size.cols), "-y", String(rows)]);
}

/** Undoes `forceWindowSize`: the window's size follows its clients again. */
export async function releaseWindowSize(tmux: TmuxClient, session: string): Promise<void> {
  await tmux.run(["set-option", "-w", "-u", "-t", windowTarget(session), "window-size"]);
}

/** True when the session exists. */
export async function hasSession(tmux: TmuxClient, session: string): Promise<boolean> {
  try {
    await tmux.run(["has-session", "-t", sessionTarget(session)]);
    return true;
  } catch (err) {
    if (err instanceof TmuxError) return false;
    throw err;
  }
}
