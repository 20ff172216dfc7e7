import { mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import http2 from "node:http2";
import https from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import tls from "node:tls";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Connectivity, NodeService } from "../../gen/staragent/v1/node_service_pb.js";
import { SessionService } from "../../gen/staragent/v1/session_service_pb.js";
import { bearerInterceptor } from "../../services/common/bearer.js";
import { REPO_ROOT, runCli, runProcess, type ServerProcess, startServerProcess } from "../support/servers.js";
import { createTestTmux, type TestTmux } from "../support/tmux.js";
import { waitFor } from "../support/wait.js";
import { testToken } from "./hub-fixture.js";

/** A self-signed certificate and key for `subjectAltName`, made by openssl (argument arrays only). */
async function selfSigned(dir: string, name: string, altNames: string): Promise<{ cert: string; key: string }> {
  const cert = join(dir, `${name}.crt`);
  const key = join(dir, `${name}.key`);
  const made = await runProcess("openssl", [
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
    "-keyout",
    key,
    "-out",
    cert,
    "-days",
    "2",
    "-subj",
    `/CN=${name}`,
    "-addext",
    `subjectAltName=${altNames}`,
  ]);
  if (made.code !== 0) throw new Error(`openssl failed: ${made.stderr}`);
  return { cert, key };
}

/** One HTTPS request over HTTP/1.1 trusting `ca`; resolves with the status, headers and body. */
function httpsRequest(
  url: string,
  ca: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.request(url, { method: options.method ?? "GET", headers: options.headers, ca }, (res) => {
      let body = "";
      res.on("data", (c: Buffer) => {
        body += c.toString();
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end(options.body);
  });
}

/** The protocol a TLS client offering `protocols` gets from the server (ALPN). */
function negotiated(url: string, ca: string, protocols: string[]): Promise<string | false> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: hostname, port: Number(port), ca, ALPNProtocols: protocols }, () => {
      resolve(socket.alpnProtocol ?? false);
      socket.end();
    });
    socket.on("error", reject);
  });
}

describe("a Hub and a Node speaking TLS (self-signed certificates)", () => {
  let dir: string;
  let hubTmux: TestTmux;
  let nodeTmux: TestTmux;
  let hub: ServerProcess | undefined;
  let node: ServerProcess | undefined;
  let hubCa: string;
  let hubCertFile: string;
  const userToken = testToken();
  const nodeToken = testToken();

  beforeAll(async () => {
    dir = await realpath(await mkdtemp(join(tmpdir(), "sa-tls-")));
    hubTmux = createTestTmux();
    nodeTmux = createTestTmux();
    const hubCert = await selfSigned(dir, "hub", "DNS:localhost,IP:127.0.0.1");
    // The Node's certificate names only its address: reached as `localhost`, the Hub must refuse it.
    const nodeCert = await selfSigned(dir, "node", "IP:127.0.0.1");
    hubCertFile = hubCert.cert;
    hubCa = await readFile(hubCert.cert, "utf8");
    await nodeTmux.run("new-session", "-d", "-s", "far-work", "sleep 600");
    await hubTmux.run("new-session", "-d", "-s", "near-work", "sleep 600");
    node = await startServerProcess({
      kind: "node",
      tmuxSocket: nodeTmux.socketName,
      token: nodeToken,
      args: ["--name", "tn", "--tls-cert", nodeCert.cert, "--tls-key", nodeCert.key],
    });
    hub = await startServerProcess({
      kind: "hub",
      tmuxSocket: hubTmux.socketName,
      token: userToken,
      args: ["--tls-cert", hubCert.cert, "--tls-key", hubCert.key, "--node-ca", nodeCert.cert],
    });
  });

  afterAll(async () => {
    await hub?.stop();
    await node?.stop();
    await hubTmux?.close();
    await nodeTmux?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const hubUrl = () => (hub as ServerProcess).url;

  it("listens on https://, offers HTTP/2 and HTTP/1.1, and tells a cleartext request to use https", async () => {
    expect(hubUrl()).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(hub?.stdout()).toContain(`Log in: ${hubUrl()}/login#token=`);
    expect(await negotiated(hubUrl(), hubCa, ["h2", "http/1.1"])).toBe("h2");
    expect(await negotiated(hubUrl(), hubCa, ["http/1.1"])).toBe("http/1.1");
    const cleartext = await runProcess("curl", ["-sS", `http://${new URL(hubUrl()).host}/`]);
    expect(cleartext.stdout).toBe("This port speaks HTTPS only: use https:// instead of http://.\n");
  });

  it("answers gRPC over HTTP/2 (Connect's and grpc-js) and Connect over HTTP/1.1 and HTTP/2", async () => {
    const interceptors = [bearerInterceptor(userToken)];
    const nodeOptions = { ca: hubCa };
    const grpc = createClient(NodeService, createGrpcTransport({ baseUrl: hubUrl(), interceptors, nodeOptions }));
    expect((await grpc.listNodes({})).nodes.map((n) => n.name)).toContain("nodes/local");
    for (const httpVersion of ["1.1", "2"] as const) {
      const connect = createClient(
        SessionService,
        createConnectTransport({ baseUrl: hubUrl(), httpVersion, interceptors, nodeOptions }),
      );
      expect((await connect.listSessions({ parent: "nodes/local" })).unreachable).toEqual([]);
    }
    // A script with grpc-js and the published protos, trusting the certificate as the docs say.
    const script = await runProcess(process.execPath, [join(REPO_ROOT, "examples/list-sessions.mjs")], {
      env: { STARAGENT_URL: hubUrl(), STARAGENT_AUTH_TOKEN: userToken, NODE_EXTRA_CA_CERTS: hubCertFile },
    });
    expect(script.code).toBe(0);
    expect(script.stdout).toMatch(/^nodes\/local\/sessions\/near-work\tidle\t/m);
  });

  it("logs a browser in with a __Host- Secure, HttpOnly, SameSite=Strict cookie that then works over HTTP/2", async () => {
    const origin = hubUrl();
    const login = await httpsRequest(`${hubUrl()}/login`, hubCa, {
      method: "POST",
      headers: { origin, accept: "application/json", "content-type": "application/x-www-form-urlencoded" },
      body: `token=${encodeURIComponent(userToken)}`,
    });
    expect(login.status).toBe(200);
    const cookie = String(login.headers["set-cookie"]);
    expect(cookie).toMatch(/^__Host-staragent_session=[^;]+; HttpOnly; SameSite=Strict; Path=\/; Secure; Max-Age=\d+$/);
    const { key } = JSON.parse(login.body) as { key: string };
    const value = cookie.split(";")[0] as string;
    const page = await httpsRequest(`${hubUrl()}/`, hubCa, { headers: { cookie: value } });
    expect(page.status).toBe(200);
    // The dashboard's calls: Connect JSON over HTTP/2, with the cookie and the page's origin.
    const session = http2.connect(hubUrl(), { ca: hubCa });
    try {
      const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = session.request({
          ":method": "POST",
          ":path": "/staragent.v1.SessionService/ListSessions",
          "content-type": "application/json",
          origin,
          cookie: value,
          "staragent-login-key": key,
        });
        let status = 0;
        let body = "";
        req.on("response", (h) => {
          status = Number(h[":status"]);
        });
        req.on("data", (c: Buffer) => {
          body += c.toString();
        });
        req.on("end", () => resolve({ status, body }));
        req.on("error", reject);
        req.end('{"parent":"nodes/local"}');
      });
      expect(answer.status).toBe(200);
      expect(JSON.parse(answer.body).sessions.map((x: { name: string }) => x.name)).toEqual([
        "nodes/local/sessions/near-work",
      ]);
    } finally {
      session.close();
    }
  });

  it("adds a TLS Node with 'staragent nodes add', reaches it, and says why when it cannot trust its certificate", async () => {
    const tokenFile = join(dir, "node-token");
    await writeFile(tokenFile, `${nodeToken}\n`, { mode: 0o600 });
    const cli = { STARAGENT_URL: hubUrl(), STARAGENT_AUTH_TOKEN: userToken, NODE_EXTRA_CA_CERTS: hubCertFile };
    const nodeUrl = (node as ServerProcess).url;
    const added = await runCli(["nodes", "add", "tn", nodeUrl, "--token-file", tokenFile], cli);
    expect(added.code).toBe(0);
    expect(added.stdout).toMatch(new RegExp(`^added nodes/tn at ${nodeUrl}: (online|connecting)\\n$`));
    const hubNodes = createClient(
      NodeService,
      createGrpcTransport({
        baseUrl: hubUrl(),
        interceptors: [bearerInterceptor(userToken)],
        nodeOptions: { ca: hubCa },
      }),
    );
    await waitFor(
      async () => (await hubNodes.getNode({ name: "nodes/tn" })).node?.connectivity === Connectivity.ONLINE,
      "the TLS Node ONLINE",
    );
    const sessions = createClient(
      SessionService,
      createGrpcTransport({
        baseUrl: hubUrl(),
        interceptors: [bearerInterceptor(userToken)],
        nodeOptions: { ca: hubCa },
      }),
    );
    expect((await sessions.listSessions({ parent: "nodes/tn" })).sessions.map((s) => s.name)).toEqual([
      "nodes/tn/sessions/far-work",
    ]);

    // By a name its certificate does not hold, the Node is not trusted; last_error says what to do.
    const byName = nodeUrl.replace("127.0.0.1", "localhost");
    // Refused at once with the reason, and added with --force to show OFFLINE with it.
    const refused = await runCli(["nodes", "add", "tn-by-name", byName, "--token-file", tokenFile], cli);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /^staragent nodes: FailedPrecondition: Node tn-by-name cannot be used: the Hub does not trust/,
    );
    const untrusted = await runCli(["nodes", "add", "tn-by-name", byName, "--token-file", tokenFile, "--force"], cli);
    expect(untrusted.code).toBe(0);
    const offline = await waitFor(async () => {
      const n = (await hubNodes.getNode({ name: "nodes/tn-by-name" })).node;
      return n?.connectivity === Connectivity.OFFLINE && n;
    }, "the untrusted Node OFFLINE");
    expect(offline.lastError).toMatch(
      new RegExp(
        `^the Hub does not trust the certificate of ${byName} \\(.*altnames.*\\): start the Hub with --node-ca FILE`,
      ),
    );
    const ls = await runCli(["nodes", "ls"], cli);
    expect(ls.stdout).toMatch(/^tn\s+online\s+\d+s ago\s+\S+\s+\S+\s+https:\/\/127\.0\.0\.1:\d+$/m);
    expect(ls.stdout).toMatch(
      /^tn-by-name\s+offline\s+never\s+-\s+-\s+https:\/\/localhost:\d+\s+the Hub does not trust/m,
    );
  });
});
