import { parseArgs } from "node:util";
import { Cli, type Session, SessionStatus, StatusReason } from "../../gen/staragent/v1/session_pb.js";
import { WatchEventType } from "../../gen/staragent/v1/session_service_pb.js";
import { connectHub } from "./client.js";
import type { Command } from "./command.js";
import { enumWord, sessionLabel } from "./format.js";

/** One line for a session's state: what `staragent watch` prints when it changes. */
export function watchLine(s: Session, now = new Date()): string {
  const name = sessionLabel(s);
  const prompt = s.prompt !== "" ? `  "${s.prompt}"` : "";
  const completion = s.completionId !== "" ? `  completion=${s.completionId}` : "";
  return `${now.toISOString().slice(11, 19)}  ${name}  ${enumWord(SessionStatus, s.status)}/${enumWord(StatusReason, s.statusReason)}  ${enumWord(Cli, s.cli)}${prompt}${completion}`;
}

/** The part of a session `watch` reports on: other changes (activity times, titles) print nothing. */
function stateKey(s: Session): string {
  return [s.status, s.statusReason, s.prompt, s.completionId, s.cli].join("\u0000");
}

/**
 * `staragent watch [--node NODE]`: streams WatchSessions and prints one line per change of a session's
 * status, reason, prompt or completion (and `gone` when it ends), starting with every session's current
 * state. Runs until interrupted; the Hub's heartbeats keep the stream open.
 */
export const watchCommand: Command = {
  run: async (args, config) => {
    const { values } = parseArgs({ args, options: { node: { type: "string" } } });
    const hub = await connectHub(config);
    const controller = new AbortController();
    const stop = () => controller.abort();
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
    const known = new Map<string, string>();
    try {
      const parent = values.node ? `nodes/${values.node}` : "nodes/-";
      for await (const event of hub.sessions.watchSessions({ parent }, { signal: controller.signal })) {
        if (event.type === WatchEventType.REMOVED) {
          for (const name of event.removedNames) {
            known.delete(name);
            process.stdout.write(`${new Date().toISOString().slice(11, 19)}  ${name}  gone\n`);
          }
          continue;
        }
        for (const session of event.sessions) {
          const key = stateKey(session);
          if (known.get(session.name) === key) continue;
          known.set(session.name, key);
          process.stdout.write(`${watchLine(session)}\n`);
        }
      }
    } catch (err) {
      if (!controller.signal.aborted) throw err;
    } finally {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
    }
    return 0;
  },
};
