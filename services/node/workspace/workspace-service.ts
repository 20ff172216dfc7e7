import { Code, ConnectError, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import { SessionType } from "../../../gen/staragent/v1/session_pb.js";
import type {
  GetChangesRequest,
  GetFileDiffRequest,
  ListFilesRequest,
  ReadFileRequest,
  WorkspaceService,
} from "../../../gen/staragent/v1/workspace_service_pb.js";
import { parseSessionName } from "../../common/resource-names.js";
import type { SessionLookup } from "../session-lookup.js";
import { getChanges, getFileDiff } from "./changes.js";
import { listFiles, readFile } from "./files.js";
import { type GitRun, runGit } from "./git.js";

/**
 * `WorkspaceService` over one machine's sessions: the root of every call is the session's folder
 * (its active pane's cwd) on this machine, where every path is confined (confine.ts). What the Hub
 * serves for its own machine, and what a Node serves.
 */
export class MachineWorkspaceService implements ServiceImpl<typeof WorkspaceService> {
  constructor(
    private readonly sessions: SessionLookup,
    /** `$STARAGENT_HOME`: never read through a workspace. */
    private readonly home: string | undefined,
    /** How git is run (the machine's GitShellPool; `runGit` by default). */
    private readonly git: GitRun = runGit,
  ) {}

  async getChanges(req: GetChangesRequest, ctx: HandlerContext) {
    return getChanges(await this.root(req.name), ctx.signal, this.git);
  }

  async getFileDiff(req: GetFileDiffRequest, ctx: HandlerContext) {
    return getFileDiff(await this.root(req.name), {
      path: req.path,
      staged: req.staged,
      home: this.home,
      signal: ctx.signal,
      git: this.git,
    });
  }

  async listFiles(req: ListFilesRequest) {
    return listFiles(await this.root(req.name), { ...req, home: this.home });
  }

  async readFile(req: ReadFileRequest) {
    return readFile(await this.root(req.name), { path: req.path, maxBytes: req.maxBytes, home: this.home });
  }

  /** The session's folder; FAILED_PRECONDITION for system sessions, which have no workspace. */
  private async root(name: string): Promise<string> {
    const parsed = parseSessionName(name);
    if (parsed.node !== this.sessions.nodeName) {
      throw new ConnectError(
        `node ${parsed.node} is not served here (this is node ${this.sessions.nodeName})`,
        Code.NotFound,
      );
    }
    const session = await this.sessions.getSession(parsed.session);
    if (session.type === SessionType.SYSTEM) {
      throw new ConnectError(`${name} is a system session: it has no workspace`, Code.FailedPrecondition);
    }
    if (session.cwd === "") throw new ConnectError(`${name} has no working folder`, Code.FailedPrecondition);
    return session.cwd;
  }
}
