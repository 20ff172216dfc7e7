import { chmod, mkdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomic } from "../../common/atomic-write.js";
import { SECRET_VARIABLES } from "../../common/config.js";

/** The folder under `$STARAGENT_HOME` where a system session's secrets wait for its process (mode 0700). */
const SECRETS_DIR = "system";
/** Largest secrets file read: a few tokens. */
const MAX_SECRETS_BYTES = 64 * 1024;

/** The secrets file of a system service. */
export function secretsFile(home: string, service: string): string {
  return join(home, SECRETS_DIR, `${service}.secrets.json`);
}

/**
 * The secrets (SECRET_VARIABLES) reach a system session's process through a file only its owner can
 * read, taken and removed at once by the process: never through tmux's command line (`new-session -e`
 * shows in `ps`) nor tmux's environment (every pane would inherit them).
 *
 * Writes `secrets` for `service`'s next start (mode 0600, in a 0700 folder, written atomically); removes any stale file when there are none.
 */
export async function putLaunchSecrets(home: string, service: string, secrets: Record<string, string>): Promise<void> {
  const file = secretsFile(home, service);
  if (Object.keys(secrets).length === 0) {
    await rm(file, { force: true });
    return;
  }
  await mkdir(join(home, SECRETS_DIR), { recursive: true, mode: 0o700 });
  await chmod(join(home, SECRETS_DIR), 0o700);
  await writeFileAtomic(file, JSON.stringify(secrets), 0o600);
}

/**
 * Reads and removes the secrets left for `service` (none when there is no file). Only the variables
 * in SECRET_VARIABLES are taken; a malformed file is an error naming it (and is removed all the same,
 * so a secret never lingers).
 */
export async function takeLaunchSecrets(home: string, service: string): Promise<Record<string, string>> {
  const file = secretsFile(home, service);
  let text: string;
  try {
    const data = await readFile(file);
    text = data.length > MAX_SECRETS_BYTES ? "" : data.toString("utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return {};
    throw new Error(`${file}: cannot read it (${(err as Error).message})`);
  } finally {
    await rm(file, { force: true });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new Error(`${file}: not the secrets 'staragent system start' writes; start the service again`);
  }
  const secrets: Record<string, string> = {};
  for (const name of SECRET_VARIABLES) {
    const value = (parsed as Record<string, unknown>)[name];
    if (typeof value === "string" && value !== "") secrets[name] = value;
  }
  return secrets;
}
