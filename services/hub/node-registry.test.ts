import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { isUnreachable, relayError } from "./node-registry.js";

describe("isUnreachable", () => {
  it("counts transport failures as unreachable and a Node's own answers as reachable", () => {
    expect(isUnreachable(new ConnectError("refused", Code.Unavailable))).toBe(true);
    expect(isUnreachable(new ConnectError("slow", Code.DeadlineExceeded))).toBe(true);
    expect(isUnreachable(new Error("socket hang up"))).toBe(true);
    expect(isUnreachable(new ConnectError("no such session", Code.NotFound))).toBe(false);
    expect(isUnreachable(new ConnectError("bad", Code.InvalidArgument))).toBe(false);
  });
});

describe("relayError", () => {
  const remote = { id: "w1", local: false };

  it("passes a Node's own error on with its code and message, without its transport metadata", () => {
    const fromNode = new ConnectError("cwd: not a directory", Code.InvalidArgument, { "x-node-header": "1" });
    const relayed = relayError(remote, fromNode);
    expect([relayed.code, relayed.rawMessage]).toEqual([Code.InvalidArgument, "cwd: not a directory"]);
    expect(relayed.metadata.get("x-node-header")).toBeNull();
  });

  it("turns an unreachable Node into UNAVAILABLE naming it", () => {
    const relayed = relayError(remote, new ConnectError("connect ECONNREFUSED", Code.Unavailable));
    expect([relayed.code, relayed.rawMessage]).toEqual([
      Code.Unavailable,
      "node w1 is unreachable: connect ECONNREFUSED",
    ]);
  });

  it("keeps the local machine's errors as they are", () => {
    const relayed = relayError({ id: "local", local: true }, new ConnectError("busy", Code.Unavailable));
    expect([relayed.code, relayed.rawMessage]).toEqual([Code.Unavailable, "busy"]);
  });
});
