import { Code, ConnectError, createClient, createRouterTransport, type Interceptor } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { SessionService } from "../../gen/staragent/v1/session_service_pb.js";
import { rejectionOf } from "../../test/support/codes.js";
import { createHopGuard, nextVia, SERVER_ROLE_HEADER, VIA_HEADER } from "./hops.js";
import { markCredentialRefusals, refusalOf } from "./refusals.js";

/** A server with `interceptors` whose GetSession answers NOT_FOUND (an answer about the request). */
function server(...interceptors: Interceptor[]) {
  return createClient(
    SessionService,
    createRouterTransport(
      (router) =>
        router.service(SessionService, {
          getSession() {
            throw new ConnectError("session nodes/n1/sessions/x not found", Code.NotFound);
          },
        }),
      { router: { interceptors } },
    ),
  );
}

const failure = rejectionOf;

describe("the hop guard", () => {
  const client = server(createHopGuard("me", "hub"));

  it("refuses a request that already passed through this server, as a loop", async () => {
    const err = await failure(
      client.getSession({ name: "nodes/n1/sessions/x" }, { headers: { [VIA_HEADER]: nextVia("other", "me") } }),
    );
    expect([err.code, refusalOf(err), err.metadata.get(SERVER_ROLE_HEADER)]).toEqual([
      Code.FailedPrecondition,
      "loop",
      "hub",
    ]);
    expect(err.rawMessage).toMatch(/^loop: this request already passed through this Hub/);
  });

  it("refuses a request that passed through too many servers", async () => {
    const err = await failure(client.getSession({ name: "x" }, { headers: { [VIA_HEADER]: "a,b,c,d" } }));
    expect([err.code, refusalOf(err)]).toEqual([Code.FailedPrecondition, "loop"]);
  });

  it("lets other requests through and says what answered", async () => {
    const err = await failure(client.getSession({ name: "x" }, { headers: { [VIA_HEADER]: "other" } }));
    expect([err.code, refusalOf(err), err.metadata.get(SERVER_ROLE_HEADER)]).toEqual([Code.NotFound, undefined, "hub"]);
  });
});

describe("credential refusals", () => {
  it("marks errors of the authentication step, not the handler's", async () => {
    const refusing = server(
      markCredentialRefusals(() => () => {
        throw new ConnectError("too many failed authentication attempts", Code.ResourceExhausted);
      }),
    );
    expect(refusalOf(await failure(refusing.getSession({ name: "x" })))).toBe("credentials");
    const admitting = server(markCredentialRefusals((next) => (req) => next(req)));
    const answer = await failure(admitting.getSession({ name: "x" }));
    expect([answer.code, refusalOf(answer)]).toEqual([Code.NotFound, undefined]);
  });
});
