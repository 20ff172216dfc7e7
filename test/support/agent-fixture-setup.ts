import { existsSync } from "node:fs";
import { join } from "node:path";
import type { ChatLogRef } from "../../services/node/agents/chat-history.js";

/** One row of a status fixture table (`agents/<name>/fixtures/<version range>/cases.json`). */
export interface StatusFixtureCase {
  readonly name: string;
  /** The native log (claude transcript, codex rollout). */
  readonly log?: string;
  /** opencode: `{table,row}` dump loaded into a fresh opencode.db. */
  readonly rows?: string;
  /** claude: the sessions/<pid>.json status. */
  readonly sessions?: "idle" | "busy" | "waiting";
  /** A pane capture file in the same folder, `inline:<text>`, or "" for an unreadable screen. */
  readonly screen?: string;
  readonly title?: string;
  readonly cwd?: string;
  readonly seen?: string;
  readonly logOlderThanProcess?: boolean;
  /**
   * A resumed conversation: the process started after every record of the log (a minute ago), and the
   * log was written since (when it was placed).
   */
  readonly resumed?: boolean;
  /** claude: the sessions file's status changed after the transcript's last record (statusUpdatedAt). */
  readonly statusChangedAfterLog?: boolean;
  /** The native log was last written a minute ago (it has been quiet). */
  readonly logQuiet?: boolean;
  /** opencode: rewrite the newest assistant message as finished or failed. */
  readonly finishNewest?: string;
  readonly errorNewest?: string;
  readonly expect: {
    readonly status: string;
    readonly reason: string;
    readonly completionId?: string;
    readonly lastUserTurn?: string;
    /** The identity of the newest message queued behind the running turn, when the case checks it. */
    readonly lastQueuedMessage?: string;
    /** The last line of the completed turn's reply, when the case checks it. */
    readonly replyExcerpt?: string;
    readonly promptKind?: string;
    readonly prompt?: string;
    /** The output tokens the usage reports, when the case checks it. */
    readonly outputTokens?: number;
  };
}

/**
 * How the table-driven tests set up one agent module's fixtures: each module's
 * `agents/<name>/fixtures/setup.ts` exports one as `fixtureSetup`, next to the fixtures it places.
 */
export interface AgentFixtureSetup {
  /** The argv of a process running the CLI (what the module recognises). */
  readonly argv: readonly string[];
  /** The folder the status fixtures assume the CLI runs in. */
  readonly cwd: string;
  /** The pid the status fixtures give the CLI process (sessions files name it). */
  readonly pid: number;
  /** Puts a status fixture's native state under `home` (the CLI's `$HOME`), as the CLI would have it. */
  placeState(dir: string, home: string, fixture: StatusFixtureCase, processStart: Date): Promise<void>;
  /**
   * Puts a chat-history fixture's log (`source`, cut after `records` lines where it is a JSONL log)
   * into a new folder under `scratch`; returns where the reader finds it.
   */
  placeHistoryLog?(source: string, records: number | undefined, scratch: string): Promise<ChatLogRef>;
  /** The stand-in of the CLI (test/stand-ins/<command>), for tests that drive it in tmux. */
  readonly standIn?: {
    readonly command: string;
    /** Variables that point the CLI elsewhere than `$HOME`: unset so it writes under the test's home. */
    readonly unsetEnv: readonly string[];
    /** A word the session's status detail shows once the native state was read ("transcript"). */
    readonly stateWord: string;
    /**
     * The versions it imitates (`STANDIN_VERSION`) for the tests of several instances in one folder,
     * with how status_detail says each binds an instance to its log.
     */
    readonly versions: readonly { readonly version: string; readonly title: string; readonly bound: string }[];
  };
}

/** The stand-ins of the built-in modules, in registry order (from each module's fixture setup). */
export async function standIns(
  agentsDir: string,
  names: readonly string[],
): Promise<NonNullable<AgentFixtureSetup["standIn"]>[]> {
  const setups = await Promise.all(names.map((name) => loadFixtureSetup(agentsDir, name)));
  return setups.flatMap((s) => (s?.standIn ? [s.standIn] : []));
}

/** The fixture setup of the module named `name` (`agents/<name>/fixtures/setup.ts`), if it has one. */
export async function loadFixtureSetup(agentsDir: string, name: string): Promise<AgentFixtureSetup | undefined> {
  const path = join(agentsDir, name, "fixtures", "setup.ts");
  if (!existsSync(path)) return undefined;
  const loaded = (await import(path)) as { fixtureSetup: AgentFixtureSetup };
  return loaded.fixtureSetup;
}
