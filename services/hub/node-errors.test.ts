import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { SERVER_ROLE_HEADER } from "../common/hops.js";
import { markRefusal } from "../common/refusals.js";
import { classifyNodeError, describeProblem } from "./node-errors.js";

describe("classifyNodeError", () => {
  it("counts transport failures as unreachable", () => {
    expect(classifyNodeError(new ConnectError("refused", Code.Unavailable))).toBe("unreachable");
    expect(classifyNodeError(new ConnectError("slow", Code.DeadlineExceeded))).toBe("unreachable");
    expect(classifyNodeError(new Error("socket hang up"))).toBe("unreachable");
    expect(classifyNodeError(new ConnectError("read ECONNRESET", Code.Aborted))).toBe("unreachable");
  });

  it("passes a Node's answers about the request on, whatever their code", () => {
    expect(classifyNodeError(new ConnectError("no such session", Code.NotFound))).toBe("answer");
    expect(classifyNodeError(new ConnectError("bad", Code.InvalidArgument))).toBe("answer");
    expect(classifyNodeError(new ConnectError("session has 8 attachments", Code.ResourceExhausted))).toBe("answer");
    expect(classifyNodeError(new ConnectError("read-only attachment", Code.PermissionDenied))).toBe("answer");
  });

  it("tells a Node refusing the Hub itself from an answer with the same code", () => {
    const limited = markRefusal(new ConnectError("too many failed attempts", Code.ResourceExhausted), "credentials");
    expect(classifyNodeError(limited)).toBe("refused");
    expect(classifyNodeError(new ConnectError("missing or invalid credentials", Code.Unauthenticated))).toBe("refused");
    expect(classifyNodeError(markRefusal(new ConnectError("loop", Code.FailedPrecondition), "loop"))).toBe("loop");
    const hub = new ConnectError("not found", Code.NotFound, { [SERVER_ROLE_HEADER]: "hub" });
    expect(classifyNodeError(hub)).toBe("not-a-node");
  });

  it("tells a certificate the Hub does not trust, and a Node without TLS, from a Node that is gone", () => {
    const tlsError = (code: string) =>
      new ConnectError("tls failed", Code.Internal, undefined, undefined, Object.assign(new Error(code), { code }));
    expect(classifyNodeError(tlsError("DEPTH_ZERO_SELF_SIGNED_CERT"))).toBe("untrusted-certificate");
    expect(classifyNodeError(tlsError("ERR_TLS_CERT_ALTNAME_INVALID"))).toBe("untrusted-certificate");
    expect(classifyNodeError(tlsError("CERT_HAS_EXPIRED"))).toBe("untrusted-certificate");
    expect(classifyNodeError(tlsError("ERR_SSL_WRONG_VERSION_NUMBER"))).toBe("not-tls");
    expect(classifyNodeError(tlsError("ECONNREFUSED"))).toBe("answer");
  });
});

describe("describeProblem", () => {
  const node = { id: "w1", url: "http://10.0.0.2:8081" };

  it("names the node and the fix", () => {
    expect(describeProblem("refused", node, "UNAUTHENTICATED: missing or invalid credentials")).toMatch(
      /^the Node at http:\/\/10\.0\.0\.2:8081 refuses the Hub's node token .*node_token/,
    );
    expect(describeProblem("wrong-node", node, "this is node w2")).toMatch(/is not w1 .* --name w1$/);
    expect(describeProblem("loop", node, "")).toMatch(/leads back to this Hub/);
    expect(describeProblem("untrusted-certificate", node, "self-signed certificate")).toMatch(/--node-ca FILE/);
    expect(describeProblem("not-tls", node, "wrong version number")).toMatch(/serves http:\/\/, not https:\/\//);
  });
});
