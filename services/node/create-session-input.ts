import { constants } from "node:fs";
import { access, stat } from "node:fs/promises";
import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { SYSTEM_SESSION_NAMES, validateSessionName } from "../common/resource-names.js";

/** Most arguments a created session's command may have. */
export const MAX_COMMAND_ARGS = 64;
/** Most bytes a created session's command may have in all (arguments together). */
export const MAX_COMMAND_BYTES = 8192;
/** Longest cwd accepted (Linux PATH_MAX). */
export const MAX_CWD_BYTES = 4096;

/**
 * C0 controls, DEL and C1 controls. A path holding one could not be shown, listed or addressed
 * reliably (a line break splits tmux's output, escapes rewrite a terminal): such paths are refused.
 */
const CONTROL_CHARACTER = /\p{Cc}/u;

/** Throws INVALID_ARGUMENT naming `session_id` unless StarAgent may create a session of that name. */
export function validateNewSessionId(sessionId: string): void {
  validateSessionName(sessionId, "session_id");
  if (SYSTEM_SESSION_NAMES.has(sessionId)) {
    throw new ConnectError(
      `session_id: ${sessionId} is reserved for StarAgent's own system sessions (never stopped through the API); choose another name`,
      Code.InvalidArgument,
    );
  }
}

/**
 * The folder a person typed, with `~` and `~/...` expanded to this machine's home folder (the
 * machine that owns the session, not the one the browser or the Hub runs on), as a shell would.
 * `~user` is left as it is (and then refused as not absolute): naming another user's home is rare and
 * reading the user database for it is not worth it.
 */
export function expandHome(cwd: string, home = homedir()): string {
  if (cwd === "~") return home;
  if (cwd.startsWith("~/")) return join(home, cwd.slice(2));
  return cwd;
}

/** Throws INVALID_ARGUMENT naming `cwd` unless it is an absolute path of a directory one can enter. */
export async function validateCwd(cwd: string): Promise<void> {
  if (cwd === "")
    throw new ConnectError("cwd: required (an absolute path of an existing directory)", Code.InvalidArgument);
  if (Buffer.byteLength(cwd) > MAX_CWD_BYTES) {
    throw new ConnectError(`cwd: longer than ${MAX_CWD_BYTES} bytes`, Code.InvalidArgument);
  }
  const control = CONTROL_CHARACTER.exec(cwd);
  if (control) {
    const code = control[0].charCodeAt(0).toString(16).padStart(2, "0");
    throw new ConnectError(
      `cwd: ${JSON.stringify(cwd)} contains a control character (U+00${code.toUpperCase()}); paths with line breaks, tabs or escapes are not accepted`,
      Code.InvalidArgument,
    );
  }
  if (!isAbsolute(cwd))
    throw new ConnectError(
      `cwd: ${JSON.stringify(cwd)} is not an absolute path (give /path/to/folder, ~ or ~/folder)`,
      Code.InvalidArgument,
    );
  const info = await stat(cwd).catch(() => undefined);
  if (!info?.isDirectory()) {
    throw new ConnectError(`cwd: ${JSON.stringify(cwd)} is not an existing directory`, Code.InvalidArgument);
  }
  const enterable = await access(cwd, constants.X_OK).then(
    () => true,
    () => false,
  );
  if (!enterable) {
    throw new ConnectError(
      `cwd: ${JSON.stringify(cwd)} cannot be entered (no search permission)`,
      Code.InvalidArgument,
    );
  }
}

/** Throws INVALID_ARGUMENT naming `command` unless it is within the limits of a created session. */
export function validateCommand(command: readonly string[]): void {
  if (command.length > MAX_COMMAND_ARGS) {
    throw new ConnectError(
      `command: ${command.length} arguments; at most ${MAX_COMMAND_ARGS} are allowed`,
      Code.InvalidArgument,
    );
  }
  const bytes = command.reduce((n, arg) => n + Buffer.byteLength(arg), 0);
  if (bytes > MAX_COMMAND_BYTES) {
    throw new ConnectError(`command: ${bytes} bytes; at most ${MAX_COMMAND_BYTES} are allowed`, Code.InvalidArgument);
  }
  if (command.some((arg) => arg.includes("\0"))) {
    throw new ConnectError("command: arguments must not contain NUL characters", Code.InvalidArgument);
  }
  if (command.length > 0 && command[0] === "") {
    throw new ConnectError("command: the program name (first argument) must not be empty", Code.InvalidArgument);
  }
}
