import { join } from "node:path";
import { expectObject, JsonFile } from "../../common/json-file.js";
import type { Logger } from "../../common/log.js";

/** Version stamped into every state file so later releases can migrate them. */
const STATE_VERSION = 1;

/** One adopted session: the tmux session it names must also match its creation time. */
export interface AdoptedSession {
  /** tmux session name. */
  readonly tmuxSession: string;
  /** tmux `session_created` (seconds), so a later session reusing the name is not taken as adopted. */
  readonly sessionCreated: number;
  /** When it was adopted (ISO 8601). */
  readonly adoptTime: string;
  /** The CLI found in it at adoption (`claude`, `codex`, `opencode`). */
  readonly cli: string;
}

/** `.staragent/adopted_sessions.json`. */
export interface AdoptedSessionsFile {
  readonly version: number;
  readonly sessions: AdoptedSession[];
}

/** One seen completion: the session, and the completion id marked seen. */
export interface SeenEntry {
  readonly tmuxSession: string;
  readonly completionId: string;
  /** When it was marked seen (ISO 8601). */
  readonly seenTime: string;
}

/** `.staragent/seen.json`: the newest seen completion per session. */
export interface SeenFile {
  readonly version: number;
  readonly seen: SeenEntry[];
}

function validateAdopted(value: unknown): AdoptedSessionsFile {
  const obj = expectObject(value, "adopted_sessions.json");
  if (!Array.isArray(obj.sessions)) throw new Error("adopted_sessions.json: 'sessions' must be an array");
  const sessions = obj.sessions.map((entry, i): AdoptedSession => {
    const e = expectObject(entry, `adopted_sessions.json: sessions[${i}]`);
    if (typeof e.tmuxSession !== "string" || typeof e.sessionCreated !== "number") {
      throw new Error(`adopted_sessions.json: sessions[${i}] needs tmuxSession (string) and sessionCreated (number)`);
    }
    return {
      tmuxSession: e.tmuxSession,
      sessionCreated: e.sessionCreated,
      adoptTime: typeof e.adoptTime === "string" ? e.adoptTime : "",
      cli: typeof e.cli === "string" ? e.cli : "",
    };
  });
  return { version: STATE_VERSION, sessions };
}

function validateSeen(value: unknown): SeenFile {
  const obj = expectObject(value, "seen.json");
  if (!Array.isArray(obj.seen)) throw new Error("seen.json: 'seen' must be an array");
  const seen = obj.seen.map((entry, i): SeenEntry => {
    const e = expectObject(entry, `seen.json: seen[${i}]`);
    if (typeof e.tmuxSession !== "string" || typeof e.completionId !== "string") {
      throw new Error(`seen.json: seen[${i}] needs tmuxSession and completionId (strings)`);
    }
    return {
      tmuxSession: e.tmuxSession,
      completionId: e.completionId,
      seenTime: typeof e.seenTime === "string" ? e.seenTime : "",
    };
  });
  return { version: STATE_VERSION, seen };
}

/** The state files of one machine, under `$STARAGENT_HOME`. */
export interface StateFiles {
  readonly adopted: JsonFile<AdoptedSessionsFile>;
  readonly seen: JsonFile<SeenFile>;
}

/** Opens the machine's state files in `home` (`$STARAGENT_HOME`). */
export function openStateFiles(home: string, log: Logger): StateFiles {
  return {
    adopted: new JsonFile(
      join(home, "adopted_sessions.json"),
      validateAdopted,
      () => ({ version: STATE_VERSION, sessions: [] }),
      log,
    ),
    seen: new JsonFile(join(home, "seen.json"), validateSeen, () => ({ version: STATE_VERSION, seen: [] }), log),
  };
}
