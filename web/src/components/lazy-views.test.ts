import { describe, expect, it } from "vitest";
import { parseRoute } from "../state/routes.js";
import { loadOnce, routeNeedsViews } from "./lazy-views.js";

describe("the views' chunk", () => {
  it("is needed by an open session and the nodes page, not by the list alone or the login", () => {
    expect(routeNeedsViews(parseRoute("/sessions/local/work"))).toBe(true);
    expect(routeNeedsViews(parseRoute("/sessions/local/work/changes"))).toBe(true);
    expect(routeNeedsViews(parseRoute("/nodes"))).toBe(true);
    expect(routeNeedsViews(parseRoute("/"))).toBe(false);
    expect(routeNeedsViews(parseRoute("/login", "?next=/nodes"))).toBe(false);
  });

  it("is fetched once while that works, and again on the next use after a failure", async () => {
    let calls = 0;
    let fail = true;
    const load = loadOnce(async () => {
      calls++;
      if (fail) throw new Error("network");
      return calls;
    });
    await expect(load()).rejects.toThrow("network");
    fail = false;
    expect(await load()).toBe(2);
    expect(await load()).toBe(2);
    expect(calls).toBe(2);
  });
});
