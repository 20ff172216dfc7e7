import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { describeError, describeNodeRefusal, isCancelled, isNetworkFailure, isUnauthenticated } from "./errors.js";

describe("describeError", () => {
  it("turns failed calls into sentences", () => {
    // A call's message and code, and the sentence the page shows for them.
    const cases: ReadonlyArray<readonly [string, Code, string]> = [
      ["missing or invalid credentials", Code.Unauthenticated, "Your login is no longer valid. Log in again."],
      [
        "node w1 is unreachable: connect ECONNREFUSED",
        Code.Unavailable,
        "Node w1 is unreachable: connect ECONNREFUSED.",
      ],
      ["session_id: a session named x already exists", Code.AlreadyExists, "A session named x already exists."],
      // Names keep their case; a field name before a value is left out.
      ["api-claude is not running", Code.FailedPrecondition, "api-claude is not running."],
      ["Node w1 refused the token.", Code.InvalidArgument, "Node w1 refused the token."],
      // A message that begins with the value given names the field in words first.
      ['node_id: "W 1" is not valid', Code.InvalidArgument, 'The node name "W 1" is not valid.'],
      [
        'cwd: "/home/a/x" is not an existing directory',
        Code.InvalidArgument,
        'The folder "/home/a/x" is not an existing directory.',
      ],
      [
        "cwd: required (an absolute path of an existing directory)",
        Code.InvalidArgument,
        "The folder is required (an absolute path of an existing directory)",
      ],
      ['display_name: "x" is too long', Code.InvalidArgument, 'The display name "x" is too long.'],
      ["url: http://x is not a URL", Code.InvalidArgument, "http://x is not a URL."],
      ["", Code.Internal, "The call failed (Internal)."],
    ];
    for (const [message, code, sentence] of cases) {
      expect(describeError(new ConnectError(message, code)), message).toBe(sentence);
    }
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

  it("names the node form's checkbox where the Hub's refusal names the command line's --force", () => {
    const refusal = new ConnectError(
      "Node w1 refused the token. Give the one in the Node's $STARAGENT_HOME/node_token. To add it all the same and fix it later, use force (staragent nodes add --force).",
      Code.InvalidArgument,
    );
    expect(describeNodeRefusal(refusal, "Add even if it refuses")).toBe(
      'Node w1 refused the token. Give the one in the Node\'s $STARAGENT_HOME/node_token. To add it all the same and fix it later, tick "Add even if it refuses" below.',
    );
    const change = new ConnectError(
      "Node w1 refused the token. To save the change all the same and fix it later, use force (staragent nodes set --force).",
      Code.InvalidArgument,
    );
    expect(describeNodeRefusal(change, "Save even if it refuses")).toBe(
      'Node w1 refused the token. To save the change all the same and fix it later, tick "Save even if it refuses" below.',
    );
    // Other failures read as describeError says them.
    const other = new ConnectError('node_id: "Bad" is not valid', Code.InvalidArgument);
    expect(describeNodeRefusal(other, "Add even if it refuses")).toBe('The node name "Bad" is not valid.');
  });
});
