import { randomBytes } from "node:crypto";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DescService } from "@bufbuild/protobuf";
import { type Client, Code, createClient, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { NodeService } from "../../gen/staragent/v1/node_service_pb.js";
import { SessionService } from "../../gen/staragent/v1/session_service_pb.js";
import { bearerInterceptor } from "../../services/common/bearer.js";
import { rejectionOf } from "../support/codes.js";
import { type ServerProcess, startServerProcess } from "../support/servers.js";
import { createTestTmux, type TestTmux } from "../support/tmux.js";

/** A Hub process on its own private tmux server, with clients and a scratch folder. */
export interface HubFixture {
  readonly tmux: TestTmux;
  readonly hub: ServerProcess;
  /** A scratch directory (real path) for session cwds and files. */
  readonly dir: string;
  readonly sessions: Client<typeof SessionService>;
  readonly nodes: Client<typeof NodeService>;
  /** The environment `staragent` client commands need to reach this Hub. */
  readonly cliEnv: NodeJS.ProcessEnv;
  close(): Promise<void>;
}

/** A random token for a test server. */
export function testToken(): string {
  return randomBytes(24).toString("base64url");
}

/** A client of `service` over gRPC (HTTP/2 cleartext) sending `token` as a bearer token. */
export function grpcClient<S extends DescService>(service: S, url: string, token?: string): Client<S> {
  const interceptors: Interceptor[] = token === undefined ? [] : [bearerInterceptor(token)];
  return createClient(service, createGrpcTransport({ baseUrl: url, interceptors }));
}

/** Starts `staragent hub --port 0` on a private tmux server; closes everything it started on failure. */
export async function startHubFixture(options: { args?: string[]; env?: NodeJS.ProcessEnv } = {}): Promise<HubFixture> {
  const tmux = createTestTmux();
  const dir = await realpath(await mkdtemp(join(tmpdir(), "sa-fixture-")));
  let hub: ServerProcess | undefined;
  try {
    hub = await startServerProcess({
      kind: "hub",
      tmuxSocket: tmux.socketName,
      token: testToken(),
      args: options.args,
      env: options.env,
    });
  } catch (err) {
    await tmux.close();
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  const running = hub;
  return {
    tmux,
    hub: running,
    dir,
    sessions: grpcClient(SessionService, running.url, running.token),
    nodes: grpcClient(NodeService, running.url, running.token),
    cliEnv: { STARAGENT_URL: running.url, STARAGENT_AUTH_TOKEN: running.token, STARAGENT_HOME: running.home },
    close: async () => {
      await running.stop();
      await tmux.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The Connect error of a call that must fail (its code and message), or throws when it succeeds. */
export async function failureOf(call: Promise<unknown>): Promise<{ code: string; message: string }> {
  const e = await rejectionOf(call);
  return { code: Code[e.code], message: e.rawMessage };
}
