import type { Cli } from "../../../gen/staragent/v1/session_pb.js";
import { plainChatParser } from "../chat/plain-parser.js";
import type { AgentContext, AgentModule, AgentSignals } from "./agent.js";
import { processKey } from "./agent.js";
import type { ProcessInfo } from "./process-table.js";

/**
 * How recently the pane's window must have printed for a screen-only CLI to count as working. tmux
 * reports the last output to the second, so a turn shows as ended 2 to 3 s after its last output: a
 * working CLI redraws its spinner or streams its reply several times a second.
 */
export const SCREEN_ACTIVE_MS = 3_000;

/**
 * Output within this long of the CLI's process start is its start-up drawing (banner, input box), not
 * a turn: a CLI opened and left alone is idle, not "review".
 */
export const SCREEN_STARTUP_MS = 5_000;

/**
 * The status of a CLI StarAgent recognises but has no reader of the native logs for (docs/status.md,
 * "Screen-only CLIs"): read from the pane's window activity alone, which every `list-panes` reports,
 * so it costs no file read and no screen capture. Working while the window printed within
 * SCREEN_ACTIVE_MS; once it is quiet, the newest burst of output is a completed turn (review until
 * someone looks), identified by the process and the second it last printed. No prompt is read: the
 * CLI's dialogs are not known from a run here, so none is answered on a guess.
 */
export function screenOnlySignals(context: AgentContext, label: string, now = Date.now()): AgentSignals {
  const { pane, process, processStart } = context;
  const printedAt = pane.windowActivity * 1000;
  const prefix = `screen only (no reader of ${label}'s logs)`;
  const base = { hasNativeLog: false, paneOnly: true } as const;
  if (printedAt < processStart.getTime() + SCREEN_STARTUP_MS) {
    return { ...base, turn: "none", completionId: "", detail: `${prefix}: nothing printed since it started` };
  }
  const lastActivity = new Date(printedAt);
  const ago = Math.max(0, Math.round((now - printedAt) / 1000));
  if (now - printedAt < SCREEN_ACTIVE_MS) {
    return { ...base, turn: "active", completionId: "", lastActivity, detail: `${prefix}: printing (${ago} s ago)` };
  }
  return {
    ...base,
    turn: "completed",
    completionId: `screen:${processKey(process)}:${pane.windowActivity}`,
    lastActivity,
    detail: `${prefix}: quiet for ${ago} s`,
  };
}

/**
 * What every screen-only CLI's module is besides its recognition: an agent looked for below the pane,
 * adoptable, its chat the pane's text (the plain parser), its status `screenOnlySignals`. No prompt
 * reader, history or interrupt keys: none is known from a run.
 */
export abstract class ScreenOnlyModule implements AgentModule {
  abstract readonly cli: Cli;
  abstract readonly name: string;
  /** The CLI's name for people, in `status_detail`. */
  protected abstract readonly label: string;
  readonly scope = "tree";
  readonly adoptable = true;
  readonly chatParser = plainChatParser;

  abstract recognises(process: ProcessInfo): boolean;

  async observe(context: AgentContext): Promise<AgentSignals> {
    return screenOnlySignals(context, this.label);
  }
}
