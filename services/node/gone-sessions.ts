import { create, fromJson, type JsonValue, toJson } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import {
  PromptKind,
  type Session,
  SessionEndSchema,
  SessionSchema,
  SessionStatus,
  StatusReason,
} from "../../gen/staragent/v1/session_pb.js";
import type { JsonFile } from "../common/json-file.js";
import type { SessionObservation } from "./status/observation.js";
import type { GoneEntry, GoneFile } from "./store/gone-file.js";
import type { TmuxArgument, TmuxClient, TmuxResult } from "./tmux/client.js";
import { capturePanes } from "./tmux/pane-captures.js";
import type { PaneInfo } from "./tmux/panes.js";

/** Lines of a gone session's screen kept in `Session.ended.last_lines`. */
const GONE_LAST_LINES = 15;
/**
 * A live agent session's screen is read for its last lines when its turn changes (status, completion,
 * newest prompt), else at most this often, and only after output.
 */
const LAST_LINES_EVERY_MS = 10_000;
/** Gone sessions remembered at most (the oldest are forgotten first). */
const MAX_GONE = 200;

/** What a session was, as the model last built it, for remembering it when it vanishes. */
export interface LastSeen {
  readonly pane: PaneInfo;
  readonly session: Session;
  readonly observation: SessionObservation;
  /** The dead pane's end (time of death in seconds, last lines), when it had died before it went. */
  readonly died?: { readonly at: number; readonly lines: readonly string[] };
}

/**
 * Sessions that vanished from tmux other than through StopSession (`tmux kill-session` by hand, the
 * tmux server killed) while an agent with its native log bound ran in them, or had run: kept as
 * ended (`Session.ended`, exit status unset) for the keep time, their chat readable from that log.
 * tmux stays the source of truth for live sessions: a gone session is only what the machine had
 * seen of it, and a live session of the same name replaces it. Kept in a state file, so it survives
 * a restart; a session that vanished while no StarAgent ran is not known (docs/operations.md).
 */
export class GoneSessions {
  private entries: Map<string, GoneEntry> | undefined;
  private readonly stopping = new Set<string>();
  private readonly screens = new Map<string, { turn: string; activity: number; at: number; lines: string[] }>();

  constructor(
    private readonly file: JsonFile<GoneFile>,
    private readonly tmux: TmuxClient,
    private readonly keepMs: () => number,
  ) {}

  /** StopSession (or the keep time) is about to kill `tmuxName`: not to be remembered when it goes. */
  expectStop(tmuxName: string): void {
    this.stopping.add(tmuxName);
  }

  /** A stop that failed: the session is remembered again if it vanishes later. */
  stopFailed(tmuxName: string): void {
    this.stopping.delete(tmuxName);
  }

  /**
   * Reads the last lines of the live agent sessions' screens whose turn changed, or that printed since
   * their last read (at most every LAST_LINES_EVERY_MS), for the lines kept when one vanishes.
   */
  async noteLive(
    live: readonly { pane: PaneInfo; observation: SessionObservation }[],
    exec?: (args: readonly TmuxArgument[]) => Promise<TmuxResult>,
  ): Promise<void> {
    const now = Date.now();
    const ids = new Set(live.map((l) => l.pane.paneId));
    for (const id of this.screens.keys()) if (!ids.has(id)) this.screens.delete(id);
    const due = live.flatMap(({ pane, observation: o }) => {
      const known = this.screens.get(pane.paneId);
      const turn = `${o.status}\0${o.completionId}\0${o.lastUserTurn ?? ""}`;
      const printed = known && known.activity !== pane.windowActivity && now - known.at >= LAST_LINES_EVERY_MS;
      return pane.paneDead || (known && known.turn === turn && !printed) ? [] : [{ pane, turn }];
    });
    if (due.length === 0) return;
    // One tmux invocation for every screen due in this look, not one each (capturePanes says why).
    const texts = await capturePanes(
      this.tmux,
      due.map(({ pane }) => ({ paneId: pane.paneId, flags: ["-J"] })),
      exec,
    ).catch(() => []);
    due.forEach(({ pane, turn }, i) => {
      const text = texts[i];
      if (text === undefined) return;
      const lines = text
        .split("\n")
        .map((l) => l.trimEnd())
        .filter((l) => l.trim() !== "");
      this.screens.set(pane.paneId, {
        turn,
        activity: pane.windowActivity,
        at: now,
        lines: lines.slice(-GONE_LAST_LINES),
      });
    });
  }

  /**
   * Takes in one read: `vanished` are the sessions listed before that tmux no longer has; `live` the
   * names tmux has now (a gone session of a live name is forgotten). Drops those past the keep time.
   */
  async update(vanished: readonly LastSeen[], live: ReadonlySet<string>): Promise<void> {
    const entries = await this.load();
    let changed = false;
    for (const seen of vanished) {
      const name = seen.pane.sessionName;
      if (this.stopping.delete(name)) continue;
      const { observation } = seen;
      entries.set(name, {
        tmuxSession: name,
        sessionCreated: seen.pane.sessionCreated,
        endedMs: seen.died ? seen.died.at * 1000 : Date.now(),
        lastLines: [...(seen.died?.lines ?? this.screens.get(seen.pane.paneId)?.lines ?? [])],
        chatLogPath: observation.chatLogPath ?? "",
        chatLogSession: observation.chatLogSession ?? "",
        chatLogDetail: observation.chatLogDetail ?? "",
        session: toJson(SessionSchema, seen.session) as unknown,
      });
      changed = true;
    }
    for (const name of this.stopping) if (!live.has(name)) this.stopping.delete(name);
    const keepMs = this.keepMs();
    for (const [name, entry] of entries) {
      if (live.has(name) || Date.now() - entry.endedMs >= keepMs) {
        entries.delete(name);
        changed = true;
      }
    }
    while (entries.size > MAX_GONE) {
      const oldest = [...entries.values()].sort((a, b) => a.endedMs - b.endedMs)[0];
      if (!oldest) break;
      entries.delete(oldest.tmuxSession);
      changed = true;
    }
    if (changed) await this.save(entries);
  }

  /** The gone sessions as the list shows them: their last Session, with `ended` set and no status. */
  sessions(): Session[] {
    return [...(this.entries?.values() ?? [])].map((entry) => {
      const last = fromJson(SessionSchema, entry.session as JsonValue, { ignoreUnknownFields: true });
      return create(SessionSchema, {
        ...last,
        status: SessionStatus.IDLE,
        statusReason: StatusReason.PROCESS_EXITED,
        prompt: "",
        promptKind: PromptKind.UNSPECIFIED,
        pendingPrompt: undefined,
        attachedClients: 0,
        queuedMessages: 0,
        statusDetail: `the tmux session went (not through StarAgent); kept as ended, its chat read from ${entry.chatLogPath}`,
        ended: create(SessionEndSchema, { endTime: timestampFromMs(entry.endedMs), lastLines: entry.lastLines }),
      });
    });
  }

  /** The observation GetChat reads a gone session's chat with (its native log); undefined if not gone. */
  observation(tmuxName: string): SessionObservation | undefined {
    const entry = this.entries?.get(tmuxName);
    if (!entry) return undefined;
    const last = fromJson(SessionSchema, entry.session as JsonValue, { ignoreUnknownFields: true });
    return {
      cli: last.cli,
      status: SessionStatus.IDLE,
      reason: StatusReason.PROCESS_EXITED,
      prompt: "",
      promptKind: PromptKind.UNSPECIFIED,
      completionId: last.completionId,
      detail: "gone",
      command: last.command,
      chatRevision: last.chatRevision,
      hasNativeLog: true,
      chatLogPath: entry.chatLogPath,
      chatLogSession: entry.chatLogSession,
      chatLogDetail: entry.chatLogDetail,
    };
  }

  /** Dismisses a gone session (StopSession); false when it is not one. */
  async dismiss(tmuxName: string): Promise<boolean> {
    const entries = await this.load();
    if (!entries.delete(tmuxName)) return false;
    await this.save(entries);
    return true;
  }

  private async load(): Promise<Map<string, GoneEntry>> {
    if (!this.entries) {
      const file = await this.file.read();
      this.entries = new Map(file.sessions.map((e) => [e.tmuxSession, e]));
    }
    return this.entries;
  }

  private async save(entries: Map<string, GoneEntry>): Promise<void> {
    // A home that cannot be written keeps the memory for this run only (the file says why, once).
    await this.file.write({ version: 1, sessions: [...entries.values()] }).catch(() => undefined);
  }
}
