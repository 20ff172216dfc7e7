import type { ReactiveController, ReactiveControllerHost } from "lit";
import type { Directory } from "../../../../gen/staragent/v1/session_service_pb.js";
import { describeError } from "../../api/errors.js";
import type { HubClient } from "../../api/hub-client.js";

/** Folders shown at once in the picker (the rest are reached by typing more of the name). */
export const MAX_SHOWN_FOLDERS = 200;
/** Quiet time after a keystroke in the folder field before the folder above it is listed. */
const TYPE_AHEAD_MS = 150;
/** C0 controls, DEL and C1 controls: refused by the node, so not sent. */
const CONTROL_CHARACTER = /\p{Cc}/u;

/** One listing of a folder on a node, filtered by what is typed after its last `/`. */
export interface FolderListing {
  /** The folder listed, with its git facts. */
  readonly directory: Directory | undefined;
  /** Its folders, by name. */
  readonly directories: readonly Directory[];
  /** The folder above it ("" at the root). */
  readonly parentPath: string;
  /** True when the node had more folders than one page. */
  readonly truncated: boolean;
}

/** Where a typed folder value points: the folder to list and the start of a name to filter by. */
export function splitFolderInput(value: string): { folder: string; prefix: string } | undefined {
  if (value === "") return { folder: "", prefix: "" };
  if (!value.startsWith("/") || CONTROL_CHARACTER.test(value)) return undefined;
  const cut = value.lastIndexOf("/");
  return { folder: value.slice(0, cut) || "/", prefix: value.slice(cut + 1) };
}

/**
 * The folder picker's state for the create dialog: lists the folder the typed path is in on the chosen
 * node (ListDirectories, after a short pause in typing), filters it by the name being typed, goes into
 * and up from folders, and makes new ones (CreateDirectory). Answers to superseded requests are
 * dropped, so a slow listing never replaces a newer one.
 */
export class FolderBrowser implements ReactiveController {
  listing: FolderListing | undefined;
  /** The start of a name typed after the listed folder's path. */
  prefix = "";
  error = "";
  busy = false;
  private request = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly host: ReactiveControllerHost,
    private readonly hub: () => HubClient | undefined,
  ) {
    host.addController(this);
  }

  hostDisconnected(): void {
    clearTimeout(this.timer);
  }

  /** The folders to show: the listing's, those starting with the typed name first. */
  shown(): Directory[] {
    const all = this.listing?.directories ?? [];
    const prefix = this.prefix.toLowerCase();
    const matching = prefix === "" ? all : all.filter((d) => d.name.toLowerCase().startsWith(prefix));
    return matching.slice(0, MAX_SHOWN_FOLDERS);
  }

  /** Follows the folder field as it is typed: lists the folder its value is in, after a pause. */
  typed(node: string, value: string): void {
    clearTimeout(this.timer);
    const split = splitFolderInput(value);
    if (!split) return;
    this.prefix = split.prefix;
    this.host.requestUpdate();
    if (this.listing?.directory?.path === split.folder) return;
    this.timer = setTimeout(() => void this.list(node, split.folder, split.prefix), TYPE_AHEAD_MS);
  }

  /** Lists `path` on `node` at once ("" is the node user's home folder). */
  async list(node: string, path: string, prefix = ""): Promise<void> {
    const hub = this.hub();
    if (!hub) return;
    clearTimeout(this.timer);
    const request = ++this.request;
    this.busy = true;
    this.host.requestUpdate();
    try {
      const res = await hub.sessions.listDirectories({
        parent: `nodes/${node}`,
        path,
        pageSize: MAX_SHOWN_FOLDERS,
      });
      if (request !== this.request) return;
      this.listing = {
        directory: res.directory,
        directories: res.directories,
        parentPath: res.parentPath,
        truncated: res.nextPageToken !== "",
      };
      this.prefix = prefix;
      this.error = "";
    } catch (err) {
      if (request !== this.request) return;
      this.error = describeError(err);
    } finally {
      if (request === this.request) {
        this.busy = false;
        this.host.requestUpdate();
      }
    }
  }

  /** Makes folder `name` in the listed folder on `node`; returns its path, or undefined (and `error`). */
  async create(node: string, name: string): Promise<string | undefined> {
    const hub = this.hub();
    const at = this.listing?.directory?.path;
    if (!hub || at === undefined) return undefined;
    const trimmed = name.trim();
    if (trimmed === "" || trimmed.includes("/") || trimmed === "." || trimmed === "..") {
      this.error = "Give the new folder a name without '/'.";
      this.host.requestUpdate();
      return undefined;
    }
    try {
      const res = await hub.sessions.createDirectory({
        parent: `nodes/${node}`,
        path: `${at === "/" ? "" : at}/${trimmed}`,
      });
      this.error = "";
      return res.directory?.path;
    } catch (err) {
      this.error = describeError(err);
      this.host.requestUpdate();
      return undefined;
    }
  }

  /** Forgets the listing (another node was chosen). */
  reset(): void {
    clearTimeout(this.timer);
    this.request++;
    this.listing = undefined;
    this.prefix = "";
    this.error = "";
    this.busy = false;
  }
}
