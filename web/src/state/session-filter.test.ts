import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { Connectivity, NodeSchema } from "../../../gen/staragent/v1/node_service_pb.js";
import {
  Cli,
  PromptKind,
  type Session,
  SessionSchema,
  SessionStatus,
  SessionType,
  StatusReason,
} from "../../../gen/staragent/v1/session_pb.js";
import { buildRows, filterSearch, NO_FILTER, parseFilter } from "./session-filter.js";

function s(node: string, id: string, extra: MessageInitShape<typeof SessionSchema> = {}): Session {
  return create(SessionSchema, {
    name: `nodes/${node}/sessions/${id}`,
    node,
    tmuxSession: id,
    type: SessionType.AGENT,
    status: SessionStatus.IDLE,
    cli: Cli.CLAUDE,
    cwd: `/src/${id}`,
    ...extra,
  });
}

const nodes = [
  create(NodeSchema, { name: "nodes/local", connectivity: Connectivity.ONLINE, local: true }),
  create(NodeSchema, { name: "nodes/w1", connectivity: Connectivity.OFFLINE }),
  create(NodeSchema, { name: "nodes/w2", connectivity: Connectivity.ONLINE }),
];

const sessions = [
  s("local", "zeta", { status: SessionStatus.REVIEW, statusReason: StatusReason.UNSEEN_COMPLETION }),
  s("local", "alpha", {
    status: SessionStatus.REVIEW,
    statusReason: StatusReason.INPUT_PROMPT,
    promptKind: PromptKind.APPROVAL,
    prompt: "Do you want to proceed?",
  }),
  s("local", "staragent-node", { type: SessionType.SYSTEM, cli: Cli.OTHER }),
  s("w1", "remote", { status: SessionStatus.WORKING, cli: Cli.CODEX, nodeUnreachable: true }),
];

describe("buildRows", () => {
  it("groups by node in the Hub's order, agents by name then system sessions apart; empty nodes keep a header", () => {
    const { rows, counts } = buildRows(sessions, nodes, new Set(["nodes/w1"]), NO_FILTER);
    expect(rows.map((r) => r.key)).toEqual([
      "node:local",
      "nodes/local/sessions/alpha",
      "nodes/local/sessions/zeta",
      "system:local",
      "nodes/local/sessions/staragent-node",
      "node:w1",
      "nodes/w1/sessions/remote",
      "node:w2",
    ]);
    expect(rows.find((r) => r.kind === "node" && r.node === "w1")).toMatchObject({ reachable: false, shown: 1 });
    expect(counts).toEqual({ all: 4, review: 2, working: 1, idle: 1 });
  });

  it("filters by status, CLI, node and words (in name, folder or prompt), counting statuses before the status filter", () => {
    const review = buildRows(sessions, nodes, new Set(), { ...NO_FILTER, status: "review" });
    expect(review.rows.filter((r) => r.kind === "session").map((r) => r.key)).toEqual([
      "nodes/local/sessions/alpha",
      "nodes/local/sessions/zeta",
    ]);
    expect(review.counts.working).toBe(1);
    const codex = buildRows(sessions, nodes, new Set(), { ...NO_FILTER, cli: "codex" });
    expect(codex.rows.map((r) => r.key)).toEqual(["node:w1", "nodes/w1/sessions/remote"]);
    const words = buildRows(sessions, nodes, new Set(), { ...NO_FILTER, query: "PROCEED approval" });
    expect(words.rows.filter((r) => r.kind === "session").map((r) => r.key)).toEqual(["nodes/local/sessions/alpha"]);
    const node = buildRows(sessions, nodes, new Set(), { ...NO_FILTER, node: "w2" });
    expect(node.rows.map((r) => r.key)).toEqual([]);
  });
});

describe("the filter in the address bar", () => {
  it("round-trips, and unknown values fall back to showing everything", () => {
    const f = { status: "working", cli: "codex", node: "w1", query: "fix bug" } as const;
    expect(parseFilter(filterSearch(f))).toEqual(f);
    expect(filterSearch(NO_FILTER)).toBe("");
    expect(parseFilter("?status=bogus&cli=<script>")).toEqual(NO_FILTER);
  });
});
