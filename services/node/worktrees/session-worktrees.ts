import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import * as v from "valibot";
import { type SessionWorktree, SessionWorktreeSchema } from "../../../gen/staragent/v1/session_pb.js";
import { JsonFile, schemaValidator } from "../../common/json-file.js";
import type { Logger } from "../../common/log.js";
import { type AddedWorktree, addWorktree, removeWorktree, type WorktreeRequest, worktreeLosses } from "./worktrees.js";

/** Version stamped into the file so later releases can migrate it. */
const FILE_VERSION = 1;

/** One worktree StarAgent made, and the session (tmux name and creation time) it was made for. */
const WorktreeRecordSchema = v.object({
  tmuxSession: v.string(),
  sessionCreated: v.number(),
  path: v.string(),
  branch: v.string(),
  repositoryRoot: v.string(),
});
type WorktreeRecord = v.InferOutput<typeof WorktreeRecordSchema>;

/** `.staragent/worktrees.json`, read at any version and stamped with this one. */
const WorktreesFileSchema = v.pipe(
  v.object({ worktrees: v.array(WorktreeRecordSchema) }),
  v.transform(({ worktrees }) => ({ version: FILE_VERSION, worktrees })),
);
type WorktreesFile = v.InferOutput<typeof WorktreesFileSchema>;

/** A session as the worktree records name it. */
export interface WorktreeSessionKey {
  readonly tmuxSession: string;
  readonly sessionCreated: number;
}

/**
 * The git worktrees StarAgent made for sessions (CreateSessionRequest.worktree), recorded in
 * `$STARAGENT_HOME/worktrees.json` against the session's tmux name and creation time, so that
 * `Session.worktree` shows it and StopSession can remove it, only when that loses nothing.
 */
export class SessionWorktrees {
  private readonly file: JsonFile<WorktreesFile>;
  private records: WorktreeRecord[] = [];

  constructor(
    private readonly stateHome: string,
    log: Logger,
  ) {
    this.file = new JsonFile(
      join(stateHome, "worktrees.json"),
      schemaValidator(WorktreesFileSchema, "worktrees.json"),
      () => ({ version: FILE_VERSION, worktrees: [] }),
      log,
    );
  }

  /** Reads the records once, at start. */
  async open(): Promise<void> {
    this.records = (await this.file.read()).worktrees;
  }

  /** The session's worktree, for `Session.worktree`. */
  of(key: WorktreeSessionKey): SessionWorktree | undefined {
    const r = this.find(key);
    return r && create(SessionWorktreeSchema, { path: r.path, branch: r.branch, repositoryRoot: r.repositoryRoot });
  }

  /** Adds the worktree a new session starts in (see addWorktree). */
  add(cwd: string, request: WorktreeRequest): Promise<AddedWorktree> {
    return addWorktree(cwd, request, this.stateHome);
  }

  /** Records the worktree of a session that started. */
  async record(key: WorktreeSessionKey, worktree: AddedWorktree): Promise<void> {
    const record: WorktreeRecord = {
      ...key,
      path: worktree.path,
      branch: worktree.branch,
      repositoryRoot: worktree.repositoryRoot,
    };
    const file = await this.file.update((f) => ({
      ...f,
      worktrees: [...f.worktrees.filter((w) => w.path !== record.path), record],
    }));
    this.records = file.worktrees;
  }

  /** Takes back a worktree whose session never started: it is new and empty, so git removes it unforced. */
  async undo(worktree: AddedWorktree): Promise<void> {
    await removeWorktree(worktree.repositoryRoot, worktree.path);
  }

  /**
   * Before a stop that removes the worktree: FAILED_PRECONDITION, saying what would be lost, unless the
   * session has a worktree StarAgent made and removing it loses nothing.
   */
  async checkRemovable(key: WorktreeSessionKey): Promise<void> {
    const r = this.find(key);
    if (!r) {
      throw new ConnectError(
        `${key.tmuxSession} has no worktree made by StarAgent; nothing was stopped (stop it without remove_worktree)`,
        Code.FailedPrecondition,
      );
    }
    const losses = await worktreeLosses(r.path, r.branch);
    if (losses.length > 0) {
      throw new ConnectError(
        `removing the worktree ${r.path} would lose work: ${losses.join("; ")}. Nothing was stopped or removed`,
        Code.FailedPrecondition,
      );
    }
  }

  /** After the session stopped: removes its worktree (when asked) and forgets the record. Never the branch. */
  async stopped(key: WorktreeSessionKey, remove: boolean): Promise<void> {
    const r = this.find(key);
    if (!r) return;
    if (remove) await removeWorktree(r.repositoryRoot, r.path);
    const file = await this.file.update((f) => ({ ...f, worktrees: f.worktrees.filter((w) => w.path !== r.path) }));
    this.records = file.worktrees;
  }

  private find(key: WorktreeSessionKey): WorktreeRecord | undefined {
    return this.records.find((w) => w.tmuxSession === key.tmuxSession && w.sessionCreated === key.sessionCreated);
  }
}
