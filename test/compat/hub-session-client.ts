import { type Client, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import type { Session } from "../../gen/staragent/v1/session_pb.js";
import { SessionService } from "../../gen/staragent/v1/session_service_pb.js";
import { bearerInterceptor } from "../../services/common/bearer.js";
import { waitFor } from "../support/wait.js";

/** The Hub's SessionService over gRPC (HTTP/2), authenticated like any script. */
export type HubSessions = Client<typeof SessionService>;

/** Connects to a Hub with its user token. */
export function connectHubSessions(url: string, token: string): HubSessions {
  return createClient(SessionService, createGrpcTransport({ baseUrl: url, interceptors: [bearerInterceptor(token)] }));
}

/**
 * Polls `GetSession` until `accept` holds. On timeout the error names what was awaited, the last
 * session seen (status, reason, prompt, completion id, title) and, through `describe`, what the pane
 * showed, so a wrong status reads as a diagnosis rather than a bare timeout.
 */
export async function waitForSession(
  hub: HubSessions,
  name: string,
  accept: (session: Session) => boolean,
  what: string,
  timeoutMs: number,
  describe: () => Promise<string>,
): Promise<Session> {
  let last: Session | undefined;
  try {
    return await waitFor(
      async () => {
        const { session } = await hub.getSession({ name });
        last = session;
        return session !== undefined && accept(session) ? session : undefined;
      },
      what,
      timeoutMs,
      200,
    );
  } catch (err) {
    const seen =
      last === undefined
        ? "no session"
        : `status=${last.status} reason=${last.statusReason} prompt=${JSON.stringify(last.prompt)} ` +
          `completion_id=${JSON.stringify(last.completionId)} detail=${JSON.stringify(last.statusDetail)} ` +
          `title=${JSON.stringify(last.paneTitle)}`;
    throw new Error(`${(err as Error).message}\nlast GetSession: ${seen}\n${await describe()}`);
  }
}

/**
 * Waits until `expect` sees the session's pending prompt read twice with the same fingerprint (a
 * person reads a drawn dialog before answering it), and returns that session.
 */
export function promptReadTwice(
  expect: (what: string, accept: (s: Session) => boolean) => Promise<Session>,
): Promise<Session> {
  let last = "";
  return expect("the prompt read twice alike", (s) => {
    const fingerprint = s.pendingPrompt?.fingerprint ?? "";
    const same = fingerprint !== "" && fingerprint === last;
    last = fingerprint;
    return same;
  });
}
