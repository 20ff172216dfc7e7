import { Cli } from "../../../../gen/staragent/v1/session_pb.js";
import type { ProcessInfo } from "../process-table.js";
import { programNames } from "../program.js";
import { ScreenOnlyModule } from "../screen-only.js";

/** The names Cursor's agent CLI runs as. */
const PROGRAM_NAMES: ReadonlySet<string> = new Set(["cursor-agent"]);
/**
 * Its install folder (`~/.local/share/cursor-agent/versions/<version>/`), which holds the node it runs
 * under and its script: what the process shows when started through its newer `agent` link.
 */
const INSTALL_FOLDER = /\/cursor-agent\/versions\//;

/**
 * Cursor's agent CLI (`cursor-agent`), which is not on npm, so no run of it here shows its screens or
 * logs: recognised by its program name or its install folder, with its status from the screen alone
 * (`ScreenOnlyModule`, docs/status.md "Screen-only CLIs").
 */
export class CursorModule extends ScreenOnlyModule {
  readonly cli = Cli.CURSOR;
  readonly name = "cursor";
  protected readonly label = "Cursor agent";

  recognises(process: ProcessInfo): boolean {
    const { names, script } = programNames(process);
    for (const name of PROGRAM_NAMES) if (names.has(name)) return true;
    return INSTALL_FOLDER.test(process.argv[0] ?? "") || INSTALL_FOLDER.test(script);
  }
}
