import { join } from "node:path";
import * as v from "valibot";
import { JsonFile, schemaValidator } from "../../common/json-file.js";
import type { Logger } from "../../common/log.js";
import { type GoneFile, openGoneFile } from "./gone-file.js";

/** Version stamped into every state file so later releases can migrate them. */
const STATE_VERSION = 1;

/** A text field older files may lack: read as empty. */
const optionalText = v.fallback(v.string(), "");

/** One adopted session: the tmux session it names must also match its creation time. */
const AdoptedSessionSchema = v.object({
  /** tmux session name. */
  tmuxSession: v.string(),
  /** tmux `session_created` (seconds), so a later session reusing the name is not taken as adopted. */
  sessionCreated: v.number(),
  /** When it was adopted (ISO 8601). */
  adoptTime: optionalText,
  /** The CLI found in it at adoption (`claude`, `codex`, `opencode`). */
  cli: optionalText,
});

/** `.staragent/adopted_sessions.json`, read at any version and stamped with this one. */
const AdoptedSessionsFileSchema = v.pipe(
  v.object({ sessions: v.array(AdoptedSessionSchema) }),
  v.transform(({ sessions }) => ({ version: STATE_VERSION, sessions })),
);

/** One seen completion: the session, and the completion id marked seen. */
const SeenEntrySchema = v.object({
  tmuxSession: v.string(),
  completionId: v.string(),
  /** When it was marked seen (ISO 8601). */
  seenTime: optionalText,
});

/** `.staragent/seen.json`: the newest seen completion per session. */
const SeenFileSchema = v.pipe(
  v.object({ seen: v.array(SeenEntrySchema) }),
  v.transform(({ seen }) => ({ version: STATE_VERSION, seen })),
);

/** One adopted session, as `adopted_sessions.json` holds it. */
export type AdoptedSession = v.InferOutput<typeof AdoptedSessionSchema>;
/** `.staragent/adopted_sessions.json`. */
export type AdoptedSessionsFile = v.InferOutput<typeof AdoptedSessionsFileSchema>;
/** One seen completion, as `seen.json` holds it. */
export type SeenEntry = v.InferOutput<typeof SeenEntrySchema>;
/** `.staragent/seen.json`. */
export type SeenFile = v.InferOutput<typeof SeenFileSchema>;

/** The state files of one machine, under `$STARAGENT_HOME`. */
export interface StateFiles {
  readonly adopted: JsonFile<AdoptedSessionsFile>;
  readonly seen: JsonFile<SeenFile>;
  /** `gone_sessions.json`: sessions killed outside StopSession, kept as ended (gone-sessions.ts). */
  readonly gone: JsonFile<GoneFile>;
}

/** Opens the machine's state files in `home` (`$STARAGENT_HOME`). */
export function openStateFiles(home: string, log: Logger): StateFiles {
  return {
    adopted: new JsonFile(
      join(home, "adopted_sessions.json"),
      schemaValidator(AdoptedSessionsFileSchema, "adopted_sessions.json"),
      () => ({ version: STATE_VERSION, sessions: [] }),
      log,
    ),
    seen: new JsonFile(
      join(home, "seen.json"),
      schemaValidator(SeenFileSchema, "seen.json"),
      () => ({ version: STATE_VERSION, seen: [] }),
      log,
    ),
    gone: openGoneFile(home, log),
  };
}
