import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SessionService } from "../../gen/staragent/v1/session_service_pb.js";
import { failureOf } from "../foundation/hub-fixture.js";
import { STARAGENT_BIN } from "../support/servers.js";
import { type NodeFixture, startNodeFixture } from "./node-fixture.js";

/** A server that refuses its token exits at once; one that accepts it runs until stopped. */
const EXIT_DEADLINE_MS = 15_000;

/** Runs `staragent args` until it exits or the deadline passes (then it is killed: it started). */
async function runUntilExit(args: string[], env: NodeJS.ProcessEnv) {
  const child: ChildProcess = spawn(process.execPath, [STARAGENT_BIN, ...args], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (c: Buffer) => {
    stderr += c.toString();
  });
  child.stdout?.resume();
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<"running">((resolve) => {
    timer = setTimeout(() => resolve("running"), EXIT_DEADLINE_MS);
  });
  const outcome = await Promise.race([exited, deadline]);
  clearTimeout(timer);
  if (outcome === "running") {
    child.kill("SIGKILL");
    await exited;
  }
  return { code: outcome, stderr };
}

describe("server tokens from the environment", () => {
  let home: string;
  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), "sa-token-env-"));
  });
  afterAll(async () => {
    await rm(home, { recursive: true, force: true });
  });

  const base = () => ({ STARAGENT_HOME: home, STARAGENT_TMUX_SOCKET: `sa-unused-${process.pid}` });

  /** A valid user token, for the Hub whose node token is the one at fault. */
  const goodUserToken = { STARAGENT_AUTH_TOKEN: "a-good-token-0123456789" };

  it.each([
    ["hub", "STARAGENT_AUTH_TOKEN", "Q", {}, /holds a token of 1 character; tokens need at least 16/],
    ["node", "STARAGENT_NODE_TOKEN", "short-token", {}, /holds a token of 11 characters; tokens need at least 16/],
    ["hub", "STARAGENT_AUTH_TOKEN", "has a space in it, sadly", {}, /holds a token with spaces or control characters/],
    ["hub", "STARAGENT_NODE_TOKEN", "tiny", goodUserToken, /holds a token of 4 characters/],
  ])("`staragent %s` refuses %s=%j at startup with a clear error", async (kind, variable, value, extra, reason) => {
    const res = await runUntilExit([kind, "--port", "0"], { ...base(), ...extra, [variable]: value });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(new RegExp(`^staragent ${kind}: ${variable} ${reason.source}`));
    expect(res.stderr).not.toContain(value);
  });
});

describe("a Node's UNAUTHENTICATED answer", () => {
  let f: NodeFixture;
  beforeAll(async () => {
    f = await startNodeFixture();
  });
  afterAll(async () => {
    await f?.close();
  });

  it("names the node token, not the Hub's user token", async () => {
    const anonymous = createClient(SessionService, createGrpcTransport({ baseUrl: f.server.url }));
    const failure = await failureOf(anonymous.listSessions({}));
    expect(failure.code).toBe("Unauthenticated");
    expect(failure.message).toMatch(/STARAGENT_NODE_TOKEN|node_token/);
    expect(failure.message).not.toMatch(/auth_token|AUTH_TOKEN/);
  });
});
