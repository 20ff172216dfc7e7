import { Cli } from "../../../../gen/staragent/v1/session_pb.js";
import { plainChatParser } from "../../chat/plain-parser.js";
import type { AgentContext, AgentModule, AgentSignals } from "../agent.js";
import type { ProcessInfo } from "../process-table.js";
import { programNames } from "../program.js";
import { screenOnlySignals } from "../screen-only.js";

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
 * (`screenOnlySignals`, docs/status.md "Screen-only CLIs"). Its chat is the pane's text; no prompt is
 * read or answered, and no interrupt key is sent, since neither is known from a run.
 */
export class CursorModule implements AgentModule {
  readonly cli = Cli.CURSOR;
  readonly name = "cursor";
  readonly scope = "tree";
  readonly adoptable = true;
  readonly chatParser = plainChatParser;

  recognises(process: ProcessInfo): boolean {
    const { names, script } = programNames(process);
    for (const name of PROGRAM_NAMES) if (names.has(name)) return true;
    return INSTALL_FOLDER.test(process.argv[0] ?? "") || INSTALL_FOLDER.test(script);
  }

  async observe(context: AgentContext): Promise<AgentSignals> {
    return screenOnlySignals(context, "Cursor agent");
  }
}
