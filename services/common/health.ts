import { Code, ConnectError, type ConnectRouter } from "@connectrpc/connect";
import { Health, HealthCheckResponse_ServingStatus } from "../../gen/grpc/health/v1/health_pb.js";
import { sleep } from "./async-queue.js";

/** How often a health Watch stream repeats the status, so proxies do not drop it as idle. */
const HEALTH_WATCH_INTERVAL_MS = 15_000;

/**
 * Registers `grpc.health.v1.Health`: the server as a whole (service "") and each named service are
 * SERVING while it runs. Unauthenticated by design (see the auth interceptor).
 */
export function registerHealth(router: ConnectRouter, serviceNames: string[]): void {
  const known = new Set(["", ...serviceNames]);
  const status = (service: string) =>
    known.has(service) ? HealthCheckResponse_ServingStatus.SERVING : HealthCheckResponse_ServingStatus.SERVICE_UNKNOWN;
  router.service(Health, {
    check(req) {
      if (!known.has(req.service)) throw new ConnectError(`unknown service ${req.service}`, Code.NotFound);
      return { status: status(req.service) };
    },
    async *watch(req, ctx) {
      while (!ctx.signal.aborted) {
        yield { status: status(req.service) };
        await sleep(HEALTH_WATCH_INTERVAL_MS, ctx.signal);
      }
    },
    list() {
      return {
        statuses: Object.fromEntries([...known].filter((s) => s !== "").map((s) => [s, { status: status(s) }])),
      };
    },
  });
}
