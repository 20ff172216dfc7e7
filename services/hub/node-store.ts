import { join } from "node:path";
import { JsonFile } from "../common/json-file.js";
import type { Logger } from "../common/log.js";

/** A remote node as stored in `.staragent/nodes.json` (mode 0600: it holds node tokens). */
export interface StoredNode {
  readonly id: string;
  readonly url: string;
  readonly token: string;
  readonly displayName: string;
}

/** The file of remote nodes added through the API, under the Hub's home. */
export function openNodeStore(home: string, log: Logger): JsonFile<StoredNode[]> {
  return new JsonFile(join(home, "nodes.json"), validateStoredNodes, () => [], log);
}

function validateStoredNodes(value: unknown): StoredNode[] {
  if (!Array.isArray(value)) throw new Error("nodes.json must be a JSON array");
  return value.map((v, i) => {
    const n = v as Partial<StoredNode>;
    if (typeof n?.id !== "string" || typeof n.url !== "string" || typeof n.token !== "string") {
      throw new Error(`nodes.json: entry ${i} needs id, url and token (strings)`);
    }
    return {
      id: n.id,
      url: n.url,
      token: n.token,
      displayName: typeof n.displayName === "string" ? n.displayName : n.id,
    };
  });
}
