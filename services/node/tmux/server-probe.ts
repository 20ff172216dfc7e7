import { readFile } from "node:fs/promises";
import type { TmuxClient } from "./client.js";

/**
 * A change detector for tmux that costs one small `/proc` read instead of a `tmux` process: the tmux
 * server's child processes are its panes' programs, so the list changes whenever a session, window or
 * pane is created or its program ends (also behind StarAgent's back). It does not see renames, focus,
 * titles or foreground commands; the watch loop's slower full look does.
 */
export class TmuxServerProbe {
  private pid: number | undefined;
  private marked: string | undefined;

  constructor(private readonly tmux: TmuxClient) {}

  /**
   * Remembers the server's children now; call it right before reading tmux. `serverRunning` false
   * (tmux listed no panes) forgets the server, so no `tmux` process is spawned to find one.
   */
  async mark(serverRunning: boolean): Promise<void> {
    if (!serverRunning) {
      this.pid = undefined;
      this.marked = undefined;
      return;
    }
    this.marked = await this.children();
  }

  /**
   * True when the server's children differ from the mark (a pane was created or ended); false when
   * they do not or cannot be read (no mark, no server, no `children` file in this kernel).
   */
  async changed(): Promise<boolean> {
    if (this.marked === undefined) return false;
    const now = await this.childrenOf(this.pid);
    return now !== undefined && now !== this.marked;
  }

  private async children(): Promise<string | undefined> {
    if (this.pid === undefined) {
      const out = await this.tmux.query(["display-message", "-p", "#{pid}"]).catch(() => "");
      const pid = Number(out.trim());
      if (!Number.isInteger(pid) || pid <= 0) return undefined;
      this.pid = pid;
    }
    const list = await this.childrenOf(this.pid);
    // A server that went away (or a kernel without `children` files): find it again next time.
    if (list === undefined) this.pid = undefined;
    return list;
  }

  private async childrenOf(pid: number | undefined): Promise<string | undefined> {
    if (pid === undefined) return undefined;
    try {
      // The server is single-threaded: its main task's children are all of its children.
      return await readFile(`/proc/${pid}/task/${pid}/children`, "utf8");
    } catch {
      return undefined;
    }
  }
}
