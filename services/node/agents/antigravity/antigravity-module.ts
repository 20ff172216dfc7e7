import { Cli } from "../../../../gen/staragent/v1/session_pb.js";
import { plainChatParser } from "../../chat/plain-parser.js";
import type { AgentContext, AgentModule, AgentSignals } from "../agent.js";
import type { ProcessInfo } from "../process-table.js";
import { programNames } from "../program.js";
import { screenOnlySignals } from "../screen-only.js";

/** The names Antigravity's CLI runs as (`agy`; the editor's own `antigravity` command is not it). */
const PROGRAM_NAMES: ReadonlySet<string> = new Set(["agy"]);

/**
 * Google Antigravity's CLI (`agy`), which is not on npm, so no run of it here shows its screens or
 * logs: recognised by its program name, with its status from the screen alone (`screenOnlySignals`,
 * docs/status.md "Screen-only CLIs"). Its chat is the pane's text; no prompt is read or answered, and
 * no interrupt key is sent, since neither is known from a run.
 */
export class AntigravityModule implements AgentModule {
  readonly cli = Cli.ANTIGRAVITY;
  readonly name = "antigravity";
  readonly scope = "tree";
  readonly adoptable = true;
  readonly chatParser = plainChatParser;

  recognises(process: ProcessInfo): boolean {
    const { names } = programNames(process);
    for (const name of PROGRAM_NAMES) if (names.has(name)) return true;
    return false;
  }

  async observe(context: AgentContext): Promise<AgentSignals> {
    return screenOnlySignals(context, "Antigravity");
  }
}
