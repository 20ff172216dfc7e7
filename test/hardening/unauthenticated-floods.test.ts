import { readFile } from "node:fs/promises";
import http2 from "node:http2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SessionService } from "../../gen/staragent/v1/session_service_pb.js";
import { DEFAULT_SLOWDOWN } from "../../services/common/failure-slowdown.js";
import { DEFAULT_LISTENER_LIMITS } from "../../services/common/listener.js";
import { clientFrom } from "../foundation/from-address.js";
import { failureOf, grpcClient, type HubFixture, startHubFixture } from "../foundation/hub-fixture.js";
import { waitFor } from "../support/wait.js";
import { FRAME, hpackLiterals, RawH2, SETTING_MAX_CONCURRENT_STREAMS } from "./raw-h2.js";

/** Idle connections a local process holds: more than the per-address cap of all connections (256). */
const IDLE_CONNECTIONS = 300;
/** Header-only unauthenticated WatchSessions sent on one connection. */
const FLOOD_STREAMS = 10_000;
/** Wrong tokens sent from as many loopback addresses, one each (the report used 127.0.1.1 to .200). */
const SPREAD_FAILURES = 120;
/** Connections flooded one after another (the report grew a Hub to 1.8 GB with six). */
const FLOOD_CONNECTIONS = 6;
/**
 * Growth of the Hub's RSS the flood may cause. Before the stream limit and the gate, 10 000 such
 * streams grew a Hub by about 400 MiB; a bounded Hub keeps well inside this.
 */
const RSS_GROWTH_BUDGET_BYTES = 48 * 1024 * 1024;

async function rss(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? Number.NaN) * 1024;
}

describe("unauthenticated callers on the Hub's own address", () => {
  let f: HubFixture;
  beforeAll(async () => {
    f = await startHubFixture();
  });
  afterAll(async () => {
    await f?.close();
  });

  it("holding hundreds of idle HTTP/2 connections cannot keep the user from ListSessions", async () => {
    const idle: http2.ClientHttp2Session[] = [];
    let closedByHub = 0;
    try {
      for (let i = 0; i < IDLE_CONNECTIONS; i++) {
        const session = http2.connect(f.hub.url);
        session.on("error", () => undefined);
        session.once("close", () => closedByHub++);
        idle.push(session);
        await new Promise<void>((resolve) => {
          session.once("connect", () => resolve());
          session.once("close", () => resolve());
        });
      }
      const user = grpcClient(SessionService, f.hub.url, f.hub.token);
      for (let i = 0; i < 5; i++) expect(await user.listSessions({})).toBeDefined();
      // The unauthenticated budget did it: the oldest idle connections were dropped to make room.
      await waitFor(
        () => IDLE_CONNECTIONS - closedByHub <= DEFAULT_LISTENER_LIMITS.maxUnauthenticatedPerPeer,
        "the Hub to drop unauthenticated connections beyond their budget",
      );
      expect(f.hub.stderr()).toContain("dropping unauthenticated connections to make room");
      // And the rest go once idle for the unauthenticated idle time.
      await waitFor(
        () => closedByHub === IDLE_CONNECTIONS,
        "idle unauthenticated connections to time out",
        DEFAULT_LISTENER_LIMITS.unauthenticatedIdleMs * 2,
      );
    } finally {
      for (const s of idle) s.destroy();
    }
  }, 60_000);

  it("10 000 header-only unauthenticated WatchSessions on one connection end it, without growing the Hub", async () => {
    const pid = f.hub.process.pid as number;
    const user = grpcClient(SessionService, f.hub.url, f.hub.token);
    await user.listSessions({});
    const before = await rss(pid);
    let peak = before;
    const sampler = setInterval(() => {
      void rss(pid).then((r) => {
        peak = Math.max(peak, r);
      });
    }, 20);
    const url = new URL(f.hub.url);
    const block = hpackLiterals([
      [":method", "POST"],
      [":scheme", "http"],
      [":authority", url.host],
      [":path", "/staragent.v1.SessionService/WatchSessions"],
      ["content-type", "application/grpc"],
      ["te", "trailers"],
    ]);
    try {
      // As in the report: one connection, then six of them.
      for (let round = 0; round < FLOOD_CONNECTIONS; round++) {
        const raw = await RawH2.connect(Number(url.port));
        try {
          const settings = await raw.settings;
          // The limit: advertised in SETTINGS_MAX_CONCURRENT_STREAMS...
          expect(settings.get(SETTING_MAX_CONCURRENT_STREAMS)).toBe(DEFAULT_LISTENER_LIMITS.unauthenticatedStreams);
          const during = [];
          for (let i = 0; i < FLOOD_STREAMS && !raw.socket.destroyed; i++) {
            await raw.headersOnly(2 * i + 1, block);
            if (i === 100) during.push(user.listSessions({}));
          }
          await raw.closed;
          // ... and held to: a client that ignores it loses the connection; the Hub answered (or
          // kept) no more streams than the limit.
          const answered = raw.frames.filter((fr) => fr.type === FRAME.HEADERS).length;
          expect(answered).toBeLessThanOrEqual(DEFAULT_LISTENER_LIMITS.unauthenticatedStreams);
          await Promise.all(during);
        } finally {
          raw.close();
        }
      }
    } finally {
      clearInterval(sampler);
    }
    expect(peak - before).toBeLessThan(RSS_GROWTH_BUDGET_BYTES);
    expect(await user.listSessions({})).toBeDefined();
  }, 60_000);

  it("failed calls from many loopback addresses share a global budget, and the right token never waits", async () => {
    const { globalFailuresPerSecond, globalBurst } = DEFAULT_SLOWDOWN;
    const start = Date.now();
    let pending = SPREAD_FAILURES;
    const failures = Array.from({ length: SPREAD_FAILURES }, (_, i) =>
      failureOf(
        clientFrom(SessionService, f.hub.url, `127.0.1.${i + 1}`, "a-wrong-token-0123456789").listSessions({}),
      ).finally(() => pending--),
    );
    // The right token, sent while the failures wait, is answered while they still do.
    const user = grpcClient(SessionService, f.hub.url, f.hub.token);
    await waitFor(() => Date.now() - start > 200, "the failures to be sent");
    expect(await user.listSessions({})).toBeDefined();
    expect(pending).toBeGreaterThan(0);
    const codes = new Set((await Promise.all(failures)).map((e) => e.code));
    expect([...codes]).toEqual(["Unauthenticated"]);
    // Every address failed once only (its own five are free): the global budget made them wait.
    const floorMs = ((SPREAD_FAILURES - globalBurst - 1) * 1000) / globalFailuresPerSecond;
    expect(Date.now() - start).toBeGreaterThanOrEqual(floorMs);
  }, 60_000);
});
