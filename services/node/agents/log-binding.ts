import { BoundedMap } from "../../common/bounded-map.js";

/** Bindings remembered at once (one per CLI process); the oldest is forgotten past this. */
const MAX_BINDINGS = 1024;
/**
 * Characters of a prompt's first line looked for on screen: short enough to sit on the prompt's first
 * screen line at any usual width, long enough to tell two people's prompts apart.
 */
const PROMPT_SNIPPET_CHARS = 40;
/** Shorter prompts ("y", "ok") are too common to say whose screen shows them. */
const MIN_PROMPT_CHARS = 3;

/** A native log (a file, or a session in a CLI's database) that a CLI process may be writing. */
export interface LogCandidate {
  /** Its path, or its session id for CLIs that keep a database. */
  readonly key: string;
  /** The newest user prompt it holds ("" when none), for finding it on a pane's screen. */
  readonly newestPrompt: string;
  /** Its newest write (ms since the epoch). */
  readonly updatedMs: number;
}

/** What binding one CLI process to its own log needs. */
export interface BindingRequest {
  /** The process (`pid:startTicks`). */
  readonly process: string;
  /** The other live processes of the same CLI whose panes share this pane's folder. */
  readonly siblings: readonly string[];
  /** Logs of the folder written since the process started, in any order. */
  readonly candidates: readonly LogCandidate[];
  /** A log the CLI itself names for this process (a live state file, a session id in its argv). */
  readonly explicit?: { readonly key: string; readonly how: string };
  /** The pane's title and visible screen, read fresh (called only when the screen can decide). */
  readonly screen: () => Promise<string>;
}

/** Which log a process writes, and how that was decided (for `status_detail`). */
export interface Binding {
  /** The log, or undefined when none can be said to be this process's. */
  readonly key: string | undefined;
  readonly how: string;
  /** True when this call read the screen. */
  readonly screenRead: boolean;
}

interface Remembered {
  readonly key: string;
  readonly how: string;
  readonly updatedMs: number;
}

/**
 * Binds each CLI process to its own native log when several instances of one CLI share a folder
 * (docs/status.md "Several instances in one folder": two Codex TUIs write two rollouts with the same cwd, two opencode TUIs two sessions of
 * the same directory, pre-2.1 Claude Codes two transcripts in one project folder). In order:
 *
 * 1. a log the CLI names itself (live state file, `--resume <id>`) is the process's;
 * 2. the only instance in its folder writes the folder's newest log (what every CLI did before), not
 *    counting logs bound to another process (an instance that has exited);
 * 3. otherwise a log is the process's once its newest prompt shows on the process's pane and on no
 *    other: each prompt is typed into one pane. Logs bound to a sibling are never candidates, and a
 *    binding sticks until a newer log shows its prompt on this pane (`/clear`, `/new`);
 * 4. a process none of whose candidates can be told apart is bound to nothing: its status comes from
 *    its screen, never from another session's log.
 */
export class LogBinder {
  private readonly bindings = new BoundedMap<string, Remembered>(MAX_BINDINGS);
  /** Per log, the process last bound to it: another process's log is never a folder's "newest" for this one. */
  private readonly owners = new BoundedMap<string, string>(MAX_BINDINGS);
  /** Per process: the candidates whose prompt was looked for and not found, by key and write time. */
  private readonly rejected = new BoundedMap<string, Map<string, number>>(MAX_BINDINGS);

  /** The log of `request.process`, reading its screen only when a new candidate may be its own. */
  async bind(request: BindingRequest): Promise<Binding> {
    const { process, candidates } = request;
    if (request.explicit) {
      this.remember(process, { ...request.explicit, updatedMs: 0 });
      return { ...request.explicit, screenRead: false };
    }
    if (request.siblings.length === 0) {
      // A log another process wrote (a sibling that has exited) is never this one's by recency.
      const newest = newestOf(candidates.filter((c) => (this.owners.get(c.key) ?? process) === process));
      if (!newest) return { key: undefined, how: "no log written since it started", screenRead: false };
      const how = "the folder's newest log, the only instance there";
      this.remember(process, { key: newest.key, how, updatedMs: newest.updatedMs });
      return { key: newest.key, how, screenRead: false };
    }
    const claimed = new Set(
      request.siblings.map((s) => this.bindings.get(s)?.key).filter((k): k is string => k !== undefined),
    );
    const current = this.bindings.get(process);
    const currentCandidate = current ? candidates.find((c) => c.key === current.key) : undefined;
    const rejected = this.rejected.get(process) ?? new Map<string, number>();
    // Only logs newer than the current binding can replace it; known misses are not looked for again.
    const open = candidates.filter(
      (c) =>
        !claimed.has(c.key) &&
        c.key !== current?.key &&
        (!currentCandidate || c.updatedMs > currentCandidate.updatedMs) &&
        rejected.get(c.key) !== c.updatedMs &&
        c.newestPrompt.trim().length >= MIN_PROMPT_CHARS,
    );
    let screenRead = false;
    if (open.length > 0) {
      screenRead = true;
      const screen = normalize(await request.screen());
      const shown = open.filter((c) => screen.includes(snippet(c.newestPrompt)));
      // Claims may have changed while the screen was read: a sibling bound meanwhile keeps its log.
      const stillFree = shown.filter((c) => !this.claimedBySibling(request.siblings, c.key));
      if (stillFree.length === 1 && stillFree[0]) {
        const how = "its newest prompt is on this pane's screen";
        this.remember(process, { key: stillFree[0].key, how, updatedMs: stillFree[0].updatedMs });
        this.rejected.delete(process);
        return { key: stillFree[0].key, how, screenRead };
      }
      if (stillFree.length === 0) {
        for (const c of open) rejected.set(c.key, c.updatedMs);
        this.rejected.set(process, rejected);
      }
    }
    if (current && currentCandidate && !claimed.has(current.key)) {
      return { key: current.key, how: current.how, screenRead };
    }
    return {
      key: undefined,
      how: `${request.siblings.length + 1} instances share this folder and none of their logs shows its prompt on this pane`,
      screenRead,
    };
  }

  private claimedBySibling(siblings: readonly string[], key: string): boolean {
    return siblings.some((s) => this.bindings.get(s)?.key === key);
  }

  private remember(process: string, binding: Remembered): void {
    this.bindings.set(process, binding);
    this.owners.set(binding.key, process);
  }
}

function newestOf(candidates: readonly LogCandidate[]): LogCandidate | undefined {
  let best: LogCandidate | undefined;
  for (const c of candidates) if (!best || c.updatedMs > best.updatedMs) best = c;
  return best;
}

/** Whitespace runs as one space: a screen wraps and pads what was typed. */
function normalize(text: string): string {
  return text.replace(/\s+/g, " ");
}

/** The part of a prompt looked for on screen: the start of its first line. */
export function snippet(prompt: string): string {
  const firstLine = prompt.trim().split("\n")[0] ?? "";
  return normalize(firstLine).slice(0, PROMPT_SNIPPET_CHARS).trim();
}
