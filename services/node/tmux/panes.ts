import type { TmuxClient } from "./client.js";
import { type RecordFormat, recordFormat } from "./format-records.js";
import { parseSupervision, SUPERVISION_OPTION, type SupervisionRecord } from "./supervision-record.js";

/** The tmux session option in which StarAgent marks sessions it created (kept by tmux itself). */
export const ORIGIN_OPTION = "@staragent-origin";

/** One pane as `list-panes -a` reports it, with its session's and window's facts. */
export interface PaneInfo {
  readonly sessionName: string;
  readonly sessionId: string;
  /** Seconds since the epoch. */
  readonly sessionCreated: number;
  readonly sessionAttached: number;
  /** Seconds since the epoch. */
  readonly sessionActivity: number;
  /** The value of the `@staragent-origin` session option ("" when unset). */
  readonly sessionOrigin: string;
  readonly windowId: string;
  readonly windowActive: boolean;
  readonly windowWidth: number;
  readonly windowHeight: number;
  /** Seconds since the epoch: the window's last output (tmux's `window_activity`). */
  readonly windowActivity: number;
  readonly paneId: string;
  readonly paneActive: boolean;
  readonly panePid: number;
  readonly paneCurrentCommand: string;
  readonly paneCurrentPath: string;
  readonly paneDead: boolean;
  readonly alternateOn: boolean;
  /** Lines in the pane's scrollback: grows as output scrolls off (part of the chat revision). */
  readonly historySize: number;
  /** Cursor column and row on the visible screen: move with nearly every write (chat revision). */
  readonly cursorX: number;
  readonly cursorY: number;
  readonly paneTitle: string;
  /**
   * The exit status of the command StarAgent started in the pane, once it exited (the pane option
   * EXIT_STATUS_OPTION, set by KEEP_PANE_SCRIPT); undefined while it runs or for other panes.
   */
  readonly commandExitStatus: number | undefined;
  /** What a system session's supervisor recorded in its pane (SUPERVISION_OPTION); undefined elsewhere. */
  readonly supervision: SupervisionRecord | undefined;
  /** For a dead pane: its process's exit status, when tmux learned it (128 + signal for a signal). */
  readonly deadStatus: number | undefined;
  /** For a dead pane: when its process exited, in seconds since the epoch. */
  readonly deadTime: number | undefined;
}

/**
 * The pane option holding the exit status of the command StarAgent started in the pane, written by
 * the pane itself when the command exits (KEEP_PANE_SCRIPT in sessions.ts).
 */
export const EXIT_STATUS_OPTION = "@staragent-exit-status";

const PANE_FIELDS = [
  "session_name",
  "session_id",
  "session_created",
  "session_attached",
  "session_activity",
  ORIGIN_OPTION,
  "window_id",
  "window_active",
  "window_width",
  "window_height",
  "pane_id",
  "pane_active",
  "pane_pid",
  "pane_current_command",
  "pane_current_path",
  "pane_dead",
  "alternate_on",
  "history_size",
  "cursor_x",
  "cursor_y",
  "pane_title",
  "window_activity",
  EXIT_STATUS_OPTION,
  SUPERVISION_OPTION,
  "pane_dead_status",
  "pane_dead_signal",
  "pane_dead_time",
] as const;

/** The number of values a pane record holds. */
export const PANE_FIELD_COUNT = PANE_FIELDS.length;

/** A fresh `-F` format for PANE_FIELDS (each query frames its records with a nonce of its own). */
export function paneFormat(): RecordFormat {
  return recordFormat(PANE_FIELDS.map((f) => FIELD_FORMATS[f] ?? `#{${f}}`));
}

/**
 * Fields read through a format of their own. `pane_current_path` is empty until tmux can read the
 * pane's foreground process (right after a session starts, under load): the folder the pane started
 * in stands in for it then, so a new session never reports an empty cwd.
 */
const FIELD_FORMATS: Partial<Record<(typeof PANE_FIELDS)[number], string>> = {
  pane_current_path: "#{?pane_current_path,#{pane_current_path},#{pane_start_path}}",
};

/** A shell's exit status for a process a signal ended: this plus the signal's number. */
const SIGNAL_STATUS_BASE = 128;

/** Fields tmux always prints as whole numbers; a record with anything else there is skipped. */
const NUMERIC_FIELDS = [2, 3, 4, 8, 9, 12, 17, 18, 19, 21] as const;

/**
 * Parses `list-panes -a -F format.format` output. Malformed records (cut, foreign, or with anything
 * but a whole number where tmux prints one) are skipped, so no NaN ever reaches a Session.
 */
export function parsePanes(output: string, format: RecordFormat): PaneInfo[] {
  const panes: PaneInfo[] = [];
  for (const f of format.parse(output)) {
    if (!NUMERIC_FIELDS.every((i) => /^-?\d{1,15}$/.test(f[i] ?? ""))) continue;
    panes.push({
      sessionName: f[0] ?? "",
      sessionId: f[1] ?? "",
      sessionCreated: Number(f[2]),
      sessionAttached: Number(f[3]),
      sessionActivity: Number(f[4]),
      sessionOrigin: f[5] ?? "",
      windowId: f[6] ?? "",
      windowActive: f[7] === "1",
      windowWidth: Number(f[8]),
      windowHeight: Number(f[9]),
      windowActivity: Number(f[21]),
      paneId: f[10] ?? "",
      paneActive: f[11] === "1",
      panePid: Number(f[12]),
      paneCurrentCommand: f[13] ?? "",
      paneCurrentPath: f[14] ?? "",
      paneDead: f[15] === "1",
      alternateOn: f[16] === "1",
      historySize: Number(f[17]),
      cursorX: Number(f[18]),
      cursorY: Number(f[19]),
      paneTitle: f[20] ?? "",
      commandExitStatus: /^\d{1,3}$/.test(f[22] ?? "") ? Number(f[22]) : undefined,
      supervision: parseSupervision(f[23] ?? ""),
      deadStatus: /^\d{1,3}$/.test(f[24] ?? "")
        ? Number(f[24])
        : /^\d{1,2}$/.test(f[25] ?? "")
          ? SIGNAL_STATUS_BASE + Number(f[25])
          : undefined,
      deadTime: /^\d{1,15}$/.test(f[26] ?? "") ? Number(f[26]) : undefined,
    });
  }
  return panes;
}

/** Lists every pane of every session on the client's server ([] when no server runs). */
export async function listPanes(tmux: TmuxClient): Promise<PaneInfo[]> {
  const format = paneFormat();
  return parsePanes(await tmux.query(["list-panes", "-a", "-F", format.format]), format);
}

/**
 * Every reported fact of a pane in one string: equal stamps mean tmux reported nothing new about the
 * pane, so what was derived from it (its status, its Session) can be reused without recomputing.
 */
export function paneStamp(pane: PaneInfo): string {
  return [
    pane.sessionName,
    pane.sessionId,
    pane.sessionCreated,
    pane.sessionAttached,
    pane.sessionActivity,
    pane.sessionOrigin,
    pane.windowId,
    pane.windowActive,
    pane.windowWidth,
    pane.windowHeight,
    pane.paneId,
    pane.paneActive,
    pane.panePid,
    pane.paneCurrentCommand,
    pane.paneCurrentPath,
    pane.paneDead,
    pane.alternateOn,
    pane.historySize,
    pane.cursorX,
    pane.cursorY,
    pane.paneTitle,
    pane.commandExitStatus,
    JSON.stringify(pane.supervision),
    pane.deadStatus,
    pane.deadTime,
  ].join("\0");
}

/** The pane a session shows: the active pane of its active window (first pane as a fallback). */
export function activePanes(panes: readonly PaneInfo[]): Map<string, PaneInfo> {
  const bySession = new Map<string, PaneInfo>();
  for (const pane of panes) {
    const current = bySession.get(pane.sessionName);
    const rank = (p: PaneInfo) => (p.windowActive ? 2 : 0) + (p.paneActive ? 1 : 0);
    if (!current || rank(pane) > rank(current)) bySession.set(pane.sessionName, pane);
  }
  return bySession;
}
