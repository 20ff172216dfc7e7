import { realpath } from "node:fs/promises";
import { isAbsolute } from "node:path";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { Cli } from "../../gen/staragent/v1/session_pb.js";
import { type Conversation, ConversationSchema } from "../../gen/staragent/v1/session_service_pb.js";
import type { AgentModule } from "./agents/agent.js";
import type { ConversationLog, ConversationSource } from "./agents/conversations.js";
import type { AgentRegistry } from "./agents/registry.js";

/** Conversations in a page when the request says 0. */
const DEFAULT_PAGE_SIZE = 50;
/** Most conversations one page may hold. */
const MAX_PAGE_SIZE = 1000;
/** Longest conversation id accepted (the CLIs' ids are uuids). */
const MAX_ID_CHARS = 200;
/** What a conversation id may hold: it becomes an argument of the CLI, so nothing that reads as an option. */
const CONVERSATION_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]*$/;
/** C0 controls, DEL and C1 controls. */
const CONTROL_CHARACTER = /\p{Cc}/u;

/** What PastConversations works with. */
export interface PastConversationsOptions {
  readonly agents: AgentRegistry;
  /** The node's environment: where each CLI keeps its logs (`HOME`, `CLAUDE_CONFIG_DIR`, `CODEX_HOME`). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The logs live sessions' CLIs are bound to now: log path → session resource name. */
  readonly openLogs: () => Promise<ReadonlyMap<string, string>>;
}

/** One log with the CLI it belongs to, in the order pages are cut (newest first, then by path). */
interface Candidate {
  readonly module: AgentModule;
  readonly source: ConversationSource;
  readonly log: ConversationLog;
}

const newestFirst = (a: Candidate, b: Candidate) =>
  b.log.mtimeMs - a.log.mtimeMs || (a.log.path < b.log.path ? -1 : a.log.path > b.log.path ? 1 : 0);

/**
 * The past conversations in the native logs of one machine (ListConversations) and the command that
 * resumes one (CreateSessionRequest.resume). Every CLI module with `conversations` contributes its
 * logs; a page reads the summaries (heads and tails) of only as many logs as it needs, newest first.
 */
export class PastConversations {
  constructor(private readonly options: PastConversationsOptions) {}

  /** ListConversations. */
  async list(cwd: string, cli: Cli, pageSize: number, pageToken: string) {
    if (pageSize < 0 || pageSize > MAX_PAGE_SIZE) {
      throw new ConnectError(`page_size: must be 0 to ${MAX_PAGE_SIZE}`, Code.InvalidArgument);
    }
    const size = pageSize === 0 ? DEFAULT_PAGE_SIZE : pageSize;
    const folder = cwd === "" ? undefined : await checkFolder(cwd);
    const query = `${folder ?? ""}\0${cli}`;
    const after = decodeToken(pageToken, query);
    // Which logs live sessions have open (a read of tmux when no watch runs) overlaps the file listing.
    const opening = this.options.openLogs();
    opening.catch(() => undefined);
    const candidates: Candidate[] = [];
    for (const module of this.modules(cli)) {
      const source = module.conversations as ConversationSource;
      for (const log of await source.logs(this.options.env, folder)) candidates.push({ module, source, log });
    }
    candidates.sort(newestFirst);
    const start = after ? candidates.findIndex((c) => newestFirst(c, after as Candidate) > 0) : 0;
    const open = await opening;
    const page: Conversation[] = [];
    let last: Candidate | undefined;
    let i = start < 0 ? candidates.length : start;
    for (; i < candidates.length && page.length < size; i++) {
      const candidate = candidates[i] as Candidate;
      last = candidate;
      const info = await candidate.source.summarize(candidate.log);
      if (!info || (folder !== undefined && info.cwd !== "" && info.cwd !== folder && info.cwd !== cwd)) continue;
      page.push(
        create(ConversationSchema, {
          id: info.id,
          cli: candidate.module.cli,
          cwd: info.cwd,
          firstPrompt: info.firstPrompt,
          lastPrompt: info.lastPrompt,
          updateTime: timestampFromDate(info.updateTime),
          turnCount: info.turnCount,
          turnCountExact: info.turnCountExact,
          openInSession: open.get(info.logPath) ?? "",
        }),
      );
    }
    const more = i < candidates.length && last !== undefined;
    return { conversations: page, nextPageToken: more && last ? encodeToken(last, query) : "" };
  }

  /**
   * The command that resumes `id` of `cli`: `command` (or the CLI's program) and the CLI's resume
   * arguments. INVALID_ARGUMENT for a CLI that cannot resume or a malformed id; NOT_FOUND when the
   * node has no conversation of that id.
   */
  async resumeCommand(cli: Cli, id: string, command: readonly string[]): Promise<string[]> {
    const module = this.options.agents.get(cli);
    const source = module?.conversations;
    if (!module || !source) {
      throw new ConnectError(
        `resume.cli: ${Cli[cli] ?? cli} has no conversations StarAgent can resume`,
        Code.InvalidArgument,
      );
    }
    if (id.length > MAX_ID_CHARS || !CONVERSATION_ID.test(id)) {
      throw new ConnectError(
        `resume.conversation_id: ${JSON.stringify(id)} is not a conversation id`,
        Code.InvalidArgument,
      );
    }
    let found = false;
    const key = source.pathKey?.(id) ?? id;
    for (const log of (await source.logs(this.options.env, undefined)).sort((a, b) => b.mtimeMs - a.mtimeMs)) {
      if (log.path.includes(key) && (await source.summarize(log))?.id === id) {
        found = true;
        break;
      }
    }
    if (!found) {
      throw new ConnectError(
        `resume.conversation_id: ${module.name} has no conversation ${id} on this node (ListConversations lists them)`,
        Code.NotFound,
      );
    }
    return [...(command.length > 0 ? command : [source.program]), ...source.resumeArgs(id)];
  }

  private modules(cli: Cli): AgentModule[] {
    const all = this.options.agents.modules.filter((m) => m.conversations !== undefined);
    if (cli === Cli.UNSPECIFIED) return all;
    const one = all.filter((m) => m.cli === cli);
    if (one.length === 0) {
      throw new ConnectError(`cli: ${Cli[cli] ?? cli} keeps no conversations StarAgent can list`, Code.InvalidArgument);
    }
    return one;
  }
}

async function checkFolder(cwd: string): Promise<string> {
  if (CONTROL_CHARACTER.test(cwd)) throw new ConnectError("cwd: contains a control character", Code.InvalidArgument);
  if (!isAbsolute(cwd))
    throw new ConnectError(`cwd: ${JSON.stringify(cwd)} is not an absolute path`, Code.InvalidArgument);
  return realpath(cwd).catch(() => cwd);
}

function encodeToken(last: Candidate, query: string): string {
  return Buffer.from(JSON.stringify({ q: query, t: last.log.mtimeMs, p: last.log.path })).toString("base64url");
}

/** The position after which a page continues (a stand-in candidate carrying only its order keys). */
function decodeToken(token: string, query: string): Pick<Candidate, "log"> | undefined {
  if (token === "") return undefined;
  let parsed: { q?: unknown; t?: unknown; p?: unknown } | undefined;
  try {
    parsed = JSON.parse(Buffer.from(token, "base64url").toString("utf8")) as typeof parsed;
  } catch {
    parsed = undefined;
  }
  if (parsed?.q !== query || typeof parsed.t !== "number" || typeof parsed.p !== "string") {
    throw new ConnectError(
      "page_token: not a token from an earlier call with the same parent, cwd and cli",
      Code.InvalidArgument,
    );
  }
  return { log: { path: parsed.p, mtimeMs: parsed.t, size: 0 } };
}
