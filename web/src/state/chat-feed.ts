import { type Client, Code, ConnectError } from "@connectrpc/connect";
import type { ChatMessage } from "../../../gen/staragent/v1/session_pb.js";
import type { SessionService } from "../../../gen/staragent/v1/session_service_pb.js";
import { describeError, isCancelled } from "../api/errors.js";
import { visibleText } from "../util/visible-text.js";
import type { Subscribable } from "./store-controller.js";

/**
 * The messages as the page shows them: their text, tool name and target with bidi controls and
 * invisible format characters as visible escapes (an agent's output must not reorder or hide what a
 * person reads). Every view of the chat reads the feed, so none can show them applied.
 */
export function shownMessages(messages: readonly ChatMessage[]): ChatMessage[] {
  return messages.map((m) => ({
    ...m,
    text: visibleText(m.text),
    toolName: visibleText(m.toolName),
    toolTarget: visibleText(m.toolTarget),
  }));
}

/** Lines of tmux history the chat is parsed from. */
export const CHAT_HISTORY_LINES = 3_000;
/**
 * Messages per page read from the session's log: the newest page on opening, then one more page each
 * time the person scrolls to the top. Enough to fill a tall screen; small enough to answer at once.
 */
export const CHAT_PAGE_SIZE = 50;

/** What the feed tells its view around each change of the messages (so it can keep its scroll). */
export interface ChatFeedHooks {
  /** Newer messages (or a whole chat) are about to be shown. */
  beforeNewer?(): void;
  /** Newer messages are in `messages` now; `count` of them came (0: nothing new). */
  newerShown?(count: number): void;
  /** An older page is about to be put in front. */
  beforeOlder?(): void;
  /** The older page is in `messages` now. */
  olderShown?(): void;
}

/**
 * One session's conversation as the dashboard holds it: the newest page on opening, what changed since
 * the chat cursor whenever the session's `chat_revision` moves (one call at a time; a change during a
 * call fetches again after it), and older pages on request. A whole chat (a reset) replaces everything,
 * older pages included; a token from a log the session no longer writes (after `/clear`) reads the
 * whole chat again. DOM-free: the view subscribes and keeps its scroll position through the hooks.
 */
export class ChatFeed implements Subscribable {
  /** The messages shown, oldest first. */
  messages: readonly ChatMessage[] = [];
  /** True once the first answer came. */
  loaded = false;
  /** Why the last read failed, for people ("" when it did not). */
  error = "";
  /** Whether messages older than the first shown exist. */
  hasOlder = false;
  /** True while an older page is being read. */
  loadingOlder = false;
  private olderToken = "";
  private cursor = "";
  /** The chat_revision when the newest fetch started: a different one means fetch again. */
  private requestedRevision: string | undefined;
  private fetching = false;
  private wantAgain: { revision: string } | undefined;
  private abort: AbortController | undefined;
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly client: Pick<Client<typeof SessionService>, "getChat">,
    private readonly name: () => string | undefined,
    private readonly hooks: ChatFeedHooks = {},
  ) {}

  /** True when the session's chat revision is not the one last asked for. */
  wants(revision: string): boolean {
    return revision !== this.requestedRevision;
  }

  /** Fetches what changed since the cursor (everything when `full`), one call at a time. */
  async refresh(revision: string, full = false): Promise<void> {
    const name = this.name();
    if (!name) return;
    if (this.fetching) {
      this.wantAgain = { revision };
      return;
    }
    this.fetching = true;
    this.requestedRevision = revision;
    this.abort = new AbortController();
    try {
      const res = await this.client.getChat(
        { name, cursor: full ? "" : this.cursor, historyLines: CHAT_HISTORY_LINES, pageSize: CHAT_PAGE_SIZE },
        { signal: this.abort.signal },
      );
      const messages = shownMessages(res.messages);
      this.hooks.beforeNewer?.();
      if (res.reset || full || this.cursor === "") {
        this.messages = messages;
        this.hasOlder = res.hasMore;
        this.olderToken = res.olderPageToken;
      } else if (messages.length > 0) {
        const firstId = messages[0]?.id;
        const at = this.messages.findIndex((m) => m.id === firstId);
        this.messages = [...(at >= 0 ? this.messages.slice(0, at) : this.messages), ...messages];
      }
      this.cursor = res.nextCursor;
      this.loaded = true;
      this.error = "";
      this.hooks.newerShown?.(res.messages.length);
    } catch (err) {
      if (!isCancelled(err)) {
        this.error = `The conversation could not be read: ${describeError(err)}`;
        this.requestedRevision = undefined;
      }
    } finally {
      this.fetching = false;
    }
    this.notify();
    const again = this.wantAgain;
    if (again) {
      this.wantAgain = undefined;
      void this.refresh(again.revision);
    }
  }

  /**
   * Reads the page before the first message shown and puts it in front. `revision` is the session's
   * chat revision now, for reading the whole chat again when the page's log is gone.
   */
  async loadOlder(revision: string): Promise<void> {
    const name = this.name();
    if (!name || this.loadingOlder || !this.hasOlder || this.olderToken === "") return;
    this.loadingOlder = true;
    this.notify();
    const token = this.olderToken;
    try {
      const res = await this.client.getChat(
        { name, before: token, pageSize: CHAT_PAGE_SIZE },
        {
          signal: this.abort?.signal,
        },
      );
      if (token !== this.olderToken) return; // the chat was read again meanwhile
      this.hooks.beforeOlder?.();
      const shown = new Set(this.messages.map((m) => m.id));
      this.messages = [...shownMessages(res.messages).filter((m) => !shown.has(m.id)), ...this.messages];
      this.hasOlder = res.hasMore;
      this.olderToken = res.olderPageToken;
      this.hooks.olderShown?.();
    } catch (err) {
      if (err instanceof ConnectError && err.code === Code.FailedPrecondition) {
        void this.refresh(revision, true);
      } else if (!isCancelled(err)) {
        this.error = `Earlier messages could not be read: ${describeError(err)}`;
      }
    } finally {
      this.loadingOlder = false;
      this.notify();
    }
  }

  /** Stops the reads under way (the view left the page); a later refresh reads again. */
  stop(): void {
    this.abort?.abort();
  }

  /** Calls `listener` after each change; returns the unsubscribe function. */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private notify(): void {
    for (const l of this.listeners) l();
  }
}
