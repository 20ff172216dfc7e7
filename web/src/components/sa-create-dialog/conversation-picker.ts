import type { ReactiveController, ReactiveControllerHost } from "lit";
import type { Cli } from "../../../../gen/staragent/v1/session_pb.js";
import type { Conversation } from "../../../../gen/staragent/v1/session_service_pb.js";
import { describeError } from "../../api/errors.js";
import type { HubClient } from "../../api/hub-client.js";

/** Conversations asked for at once: a folder's recent history (the search filters these). */
export const CONVERSATIONS_PAGE = 200;

/** True when `c` matches every word of `query` in its prompts or id (case-insensitive). */
export function conversationMatches(c: Conversation, query: string): boolean {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return true;
  const text = `${c.firstPrompt}\n${c.lastPrompt}\n${c.id}`.toLowerCase();
  return words.every((w) => text.includes(w));
}

/**
 * The resume list's state for the create dialog: the past conversations of one folder and CLI on one
 * node (ListConversations, newest first as the node orders them), the search over their prompts, and
 * the one chosen. A listing for an older choice of folder or CLI never replaces a newer one.
 */
export class ConversationPicker implements ReactiveController {
  conversations: readonly Conversation[] = [];
  /** The key (node, folder, CLI) the conversations are for; "" before the first listing. */
  listedFor = "";
  query = "";
  chosen = "";
  error = "";
  busy = false;
  private request = 0;

  constructor(
    private readonly host: ReactiveControllerHost,
    private readonly hub: () => HubClient | undefined,
  ) {
    host.addController(this);
  }

  hostDisconnected(): void {
    // An answer arriving after the dialog is gone is dropped.
    this.request++;
    this.busy = false;
  }

  /** The conversations the search matches, in the node's order (newest first). */
  shown(): Conversation[] {
    return this.conversations.filter((c) => conversationMatches(c, this.query));
  }

  /** Lists the conversations of `cli` that ran in `cwd` on `node`, unless they are listed already. */
  async load(node: string, cwd: string, cli: Cli): Promise<void> {
    const key = `${node}\0${cwd}\0${cli}`;
    if (key === this.listedFor) return;
    const hub = this.hub();
    if (!hub) return;
    const request = ++this.request;
    this.busy = true;
    this.listedFor = key;
    this.host.requestUpdate();
    try {
      const res = await hub.sessions.listConversations({
        parent: `nodes/${node}`,
        cwd,
        cli,
        pageSize: CONVERSATIONS_PAGE,
      });
      if (request !== this.request) return;
      this.conversations = res.conversations;
      if (!this.conversations.some((c) => c.id === this.chosen)) this.chosen = "";
      this.error = "";
    } catch (err) {
      if (request !== this.request) return;
      this.conversations = [];
      this.chosen = "";
      this.listedFor = "";
      this.error = describeError(err);
    } finally {
      if (request === this.request) {
        this.busy = false;
        this.host.requestUpdate();
      }
    }
  }

  /** Forgets the listing and the choice. */
  reset(): void {
    this.request++;
    this.conversations = [];
    this.listedFor = "";
    this.query = "";
    this.chosen = "";
    this.error = "";
    this.busy = false;
  }
}
