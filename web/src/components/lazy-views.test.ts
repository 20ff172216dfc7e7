import { describe, expect, it } from "vitest";
import { parseRoute } from "../state/routes.js";
import { routeNeedsViews } from "./lazy-views.js";

describe("the views' chunk", () => {
  it("is needed by an open session and the nodes page, not by the list alone or the login", () => {
    expect(routeNeedsViews(parseRoute("/sessions/local/work"))).toBe(true);
    expect(routeNeedsViews(parseRoute("/sessions/local/work/changes"))).toBe(true);
    expect(routeNeedsViews(parseRoute("/nodes"))).toBe(true);
    expect(routeNeedsViews(parseRoute("/"))).toBe(false);
    expect(routeNeedsViews(parseRoute("/login", "?next=/nodes"))).toBe(false);
  });
});
