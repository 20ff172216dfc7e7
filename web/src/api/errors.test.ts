import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { describeError, isCancelled, isNetworkFailure, isUnauthenticated } from "./errors.js";

describe("describeError", () => {
  it("turns failed calls into sentences", () => {
    expect(describeError(new ConnectError("missing or invalid credentials", Code.Unauthenticated))).toBe(
      "Your login is no longer valid. Log in again.",
    );
    expect(describeError(new ConnectError("node w1 is unreachable: connect ECONNREFUSED", Code.Unavailable))).toBe(
      "Node w1 is unreachable: connect ECONNREFUSED.",
    );
    expect(describeError(new ConnectError("session_id: a session named x already exists", Code.AlreadyExists))).toBe(
      "session_id: a session named x already exists.",
    );
    expect(describeError(new ConnectError("", Code.Internal))).toBe("The call failed (Internal).");
  });

  it("recognises a Hub that cannot be reached at all, a refused login and a cancelled call", () => {
    const offline = ConnectError.from(new TypeError("Failed to fetch"));
    expect(isNetworkFailure(offline)).toBe(true);
    expect(describeError(offline)).toMatch(/^Cannot reach the StarAgent Hub/);
    expect(isNetworkFailure(new ConnectError("no such session", Code.NotFound))).toBe(false);
    expect(isUnauthenticated(new ConnectError("x", Code.Unauthenticated))).toBe(true);
    expect(isCancelled(new DOMException("aborted", "AbortError"))).toBe(true);
    expect(isCancelled(new ConnectError("x", Code.Canceled))).toBe(true);
  });
});
