import { join } from "node:path";
import * as v from "valibot";
import { JsonFile, schemaValidator } from "../../common/json-file.js";
import type { Logger } from "../../common/log.js";

/** One session that vanished from tmux while an agent with a native log ran in it. */
const GoneEntrySchema = v.object({
  tmuxSession: v.string(),
  /** tmux `session_created` (seconds) of the session that vanished. */
  sessionCreated: v.number(),
  /** When it was first seen gone (ms since the epoch). */
  endedMs: v.number(),
  lastLines: v.array(v.string()),
  /** The agent's native log and how it was bound, so its chat stays readable. */
  chatLogPath: v.string(),
  chatLogSession: v.string(),
  chatLogDetail: v.string(),
  /** The last Session listed for it, as protobuf JSON. */
  session: v.unknown(),
});
/** One session remembered in `gone_sessions.json`. */
export type GoneEntry = v.InferOutput<typeof GoneEntrySchema>;

const GoneFileSchema = v.pipe(
  v.object({ sessions: v.array(GoneEntrySchema) }),
  v.transform(({ sessions }) => ({ version: 1, sessions })),
);
/** `gone_sessions.json`. */
export type GoneFile = v.InferOutput<typeof GoneFileSchema>;

/** `$STARAGENT_HOME/gone_sessions.json`: the sessions killed outside StopSession, kept as ended. */
export function openGoneFile(home: string, log: Logger): JsonFile<GoneFile> {
  return new JsonFile(
    join(home, "gone_sessions.json"),
    schemaValidator(GoneFileSchema, "gone_sessions.json"),
    () => ({ version: 1, sessions: [] }),
    log,
  );
}
