#!/usr/bin/env node
// Lists every session a StarAgent Hub (or Node) knows, with grpc-js and the published .proto files
// loaded at run time: no generated code, no StarAgent packages.
//
//   STARAGENT_URL=http://127.0.0.1:8080 STARAGENT_AUTH_TOKEN=... node examples/list-sessions.mjs [--json]
//
// The token defaults to the file $STARAGENT_HOME/auth_token (~/.staragent/auth_token).
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { rootCertificates } from "node:tls";
import { fileURLToPath } from "node:url";
import grpc from "@grpc/grpc-js";
import protoLoader from "@grpc/proto-loader";

/** The buf module root holding staragent/v1/*.proto. */
const PROTO_ROOT = fileURLToPath(new URL("../proto", import.meta.url));
/** Largest page the server gives; the loop below follows next_page_token for the rest. */
const PAGE_SIZE = 1000;

const url = new URL(process.env.STARAGENT_URL || "http://127.0.0.1:8080");
const home = process.env.STARAGENT_HOME || join(homedir(), ".staragent");
const token = process.env.STARAGENT_AUTH_TOKEN || readFileSync(join(home, "auth_token"), "utf8").trim();

const definition = protoLoader.loadSync("staragent/v1/session_service.proto", {
  includeDirs: [PROTO_ROOT],
  enums: String, // "SESSION_STATUS_WORKING" rather than 1
  longs: String,
  defaults: true,
  oneofs: true,
});
const { staragent } = grpc.loadPackageDefinition(definition);
// StarAgent serves gRPC over HTTP/2 on its one port: cleartext on loopback (the default), TLS when the
// Hub was started with --tls-cert (https://). grpc-js trusts the public roots; a self-signed Hub
// certificate is added to them from NODE_EXTRA_CA_CERTS, as Node.js itself does.
const extraCa = process.env.NODE_EXTRA_CA_CERTS;
const roots = extraCa ? Buffer.from([...rootCertificates, readFileSync(extraCa, "utf8")].join("\n")) : null;
const credentials = url.protocol === "https:" ? grpc.credentials.createSsl(roots) : grpc.credentials.createInsecure();
const client = new staragent.v1.SessionService(url.host, credentials);
const metadata = new grpc.Metadata();
metadata.set("authorization", `Bearer ${token}`);

function listSessions(request) {
  return new Promise((resolve, reject) => {
    client.ListSessions(request, metadata, (err, response) => (err ? reject(err) : resolve(response)));
  });
}

try {
  const sessions = [];
  const unreachable = new Set();
  let pageToken = "";
  do {
    const res = await listSessions({ parent: "nodes/-", pageSize: PAGE_SIZE, pageToken });
    sessions.push(...res.sessions);
    for (const node of res.unreachable) unreachable.add(node);
    pageToken = res.nextPageToken;
  } while (pageToken !== "");

  if (process.argv.includes("--json")) {
    console.log(JSON.stringify({ sessions, unreachable: [...unreachable] }, null, 2));
  } else {
    for (const s of sessions) {
      const status = s.status.replace("SESSION_STATUS_", "").toLowerCase();
      const cli = s.cli.replace("CLI_", "").toLowerCase();
      console.log([s.name, status, cli, s.cwd].join("\t"));
    }
    for (const node of unreachable) console.error(`${node} is unreachable; its sessions are as last seen`);
  }
} catch (err) {
  // err.code is a gRPC status code (16 UNAUTHENTICATED, 14 UNAVAILABLE, ...).
  console.error(`ListSessions failed: ${grpc.status[err.code] ?? err.code}: ${err.details ?? err.message}`);
  process.exitCode = 1;
} finally {
  client.close();
}
