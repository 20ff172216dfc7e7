import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { StepContext } from "./cli-driver.js";

/**
 * Where compat runs write the screens of the prompts they meet, as the Node reads them (capture-pane
 * without -J, trailing blanks cut), when set: `COMPAT_RECORD_DIR=/tmp/screens make compat`. The
 * prompt fixtures under services/node/agents/<cli>/fixtures/<version>/ are copied from such a run.
 */
export const RECORD_DIR_VARIABLE = "COMPAT_RECORD_DIR";

/** Writes the instance's screen now as `<cli>-<name>.screen.txt` in the record folder, if one is set. */
export async function recordScreen(step: Pick<StepContext, "tmux" | "instance">, cli: string, name: string) {
  const dir = process.env[RECORD_DIR_VARIABLE];
  if (!dir) return;
  const screen = (await step.tmux.run("capture-pane", "-p", "-t", step.instance.target)).replace(/\s+$/, "");
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, `${cli}-${step.instance.sessionId}-${name}.screen.txt`), `${screen}\n`);
}
