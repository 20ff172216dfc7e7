import { Cli } from "../../../../gen/staragent/v1/session_pb.js";
import type { ProcessInfo } from "../process-table.js";
import { programNames } from "../program.js";
import { ScreenOnlyModule } from "../screen-only.js";

/**
 * Google Antigravity's CLI (`agy`), which is not on npm, so no run of it here shows its screens or
 * logs: recognised by its program name (the editor's own `antigravity` command is not it), with its
 * status from the screen alone (`ScreenOnlyModule`, docs/status.md "Screen-only CLIs").
 */
export class AntigravityModule extends ScreenOnlyModule {
  readonly cli = Cli.ANTIGRAVITY;
  readonly name = "antigravity";
  protected readonly label = "Antigravity";

  recognises(process: ProcessInfo): boolean {
    return programNames(process).names.has("agy");
  }
}
