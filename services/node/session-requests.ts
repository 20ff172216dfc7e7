import { Code, ConnectError } from "@connectrpc/connect";
import { type Session, SessionOrigin, SessionType } from "../../gen/staragent/v1/session_pb.js";
import { sessionResourceName } from "../common/resource-names.js";
import { TmuxError } from "./tmux/client.js";

/**
 * The checks of the session operations (stop, adopt, mark seen) against the session as it is, and
 * the errors they give: which sessions each operation may touch, and why not in words a person
 * acts on. CreateSession's input checks are in `create-session-input.ts`.
 */

/** NOT_FOUND for a session of this machine. */
export function sessionNotFound(node: string, tmuxName: string): ConnectError {
  return new ConnectError(`session ${sessionResourceName(node, tmuxName)} not found`, Code.NotFound);
}

/** The command of a new session exited before it could be read: the session is gone. */
export function exitedAtOnce(sessionId: string): ConnectError {
  return new ConnectError(
    `the command of ${sessionId} exited at once, so the session ended: check the command and cwd`,
    Code.FailedPrecondition,
  );
}

/** The error for tmux failing `new-session`: a name in use, a command that ended at once; else `err`. */
export function createFailure(err: unknown, sessionId: string): unknown {
  if (err instanceof TmuxError && /duplicate session/i.test(err.stderr)) {
    return new ConnectError(`session_id: a session named ${sessionId} already exists`, Code.AlreadyExists);
  }
  if (err instanceof TmuxError && err.isNotFound) return exitedAtOnce(sessionId);
  return err;
}

/** Stops created sessions always, adopted and unmanaged ones with `force`, system sessions never. */
export function checkStoppable(session: Session, force: boolean): void {
  const tmuxName = session.tmuxSession;
  if (session.type === SessionType.SYSTEM) {
    throw new ConnectError(
      `${tmuxName} is a StarAgent system session and is never stopped through the API; stop it on its machine`,
      Code.FailedPrecondition,
    );
  }
  if (session.origin !== SessionOrigin.CREATED && !force) {
    const what = session.origin === SessionOrigin.ADOPTED ? "was adopted" : "was not created by StarAgent";
    throw new ConnectError(`${tmuxName} ${what}; stop it with force to kill it anyway`, Code.FailedPrecondition);
  }
}

/** True when the session needs an adoption record (an unmanaged one); false when already adopted. */
export function needsAdoption(session: Session): boolean {
  const tmuxName = session.tmuxSession;
  if (session.origin === SessionOrigin.ADOPTED) return false;
  if (session.origin === SessionOrigin.SYSTEM) {
    throw new ConnectError(`${tmuxName} is a system session and cannot be adopted`, Code.FailedPrecondition);
  }
  if (session.origin === SessionOrigin.CREATED) {
    throw new ConnectError(`${tmuxName} was created by StarAgent; it needs no adoption`, Code.FailedPrecondition);
  }
  return true;
}

/**
 * The completion a MarkSessionSeen marks: the newest (`completionId` "" or equal to it), or
 * undefined when the session has none and none was named. A different id than the newest is
 * FAILED_PRECONDITION (the viewer saw an older turn).
 */
export function completionToMark(session: Session, completionId: string): string | undefined {
  const tmuxName = session.tmuxSession;
  const newest = session.completionId;
  if (newest === "") {
    if (completionId === "") return undefined;
    throw new ConnectError(`completion_id: ${tmuxName} has no completed turn`, Code.FailedPrecondition);
  }
  if (completionId !== "" && completionId !== newest) {
    throw new ConnectError(
      `completion_id: ${completionId} is not the newest completion of ${tmuxName} (${newest}); reload and try again`,
      Code.FailedPrecondition,
    );
  }
  return newest;
}
