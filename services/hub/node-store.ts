import { join } from "node:path";
import * as v from "valibot";
import { JsonFile, schemaValidator } from "../common/json-file.js";
import type { Logger } from "../common/log.js";

/** A remote node as stored in `.staragent/nodes.json` (mode 0600: it holds node tokens). */
const StoredNodeSchema = v.pipe(
  v.object({
    id: v.string(),
    url: v.string(),
    token: v.string(),
    /** Shown in the dashboard; the id when the file has none. */
    displayName: v.optional(v.unknown()),
  }),
  v.transform((n) => ({
    id: n.id,
    url: n.url,
    token: n.token,
    displayName: typeof n.displayName === "string" ? n.displayName : n.id,
  })),
);

/** `.staragent/nodes.json`: the remote nodes added through the API. */
const NodesFileSchema = v.array(StoredNodeSchema);

/** A remote node as stored in `.staragent/nodes.json`. */
export type StoredNode = Readonly<v.InferOutput<typeof StoredNodeSchema>>;

/** The file of remote nodes added through the API, under the Hub's home. */
export function openNodeStore(home: string, log: Logger): JsonFile<StoredNode[]> {
  return new JsonFile(join(home, "nodes.json"), schemaValidator(NodesFileSchema, "nodes.json"), () => [], log);
}
