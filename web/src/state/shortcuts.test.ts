import { describe, expect, it } from "vitest";
import { parseRoute } from "./routes.js";
import { type KeyContext, shortcutFor } from "./shortcuts.js";

const at = (path: string, key: string, extra: Partial<KeyContext> = {}) =>
  shortcutFor({ key, modified: false, inField: false, route: parseRoute(path), loggedIn: true, ...extra });

describe("shortcutFor", () => {
  it("opens search and New session from the list and the nodes page", () => {
    expect([at("/", "/"), at("/", "n"), at("/nodes", "n")]).toEqual(["search", "new-session", "new-session"]);
  });

  it("never takes a letter on a session's page, in a field, with a modifier or logged out", () => {
    expect(at("/sessions/local/work", "n")).toBeUndefined();
    expect(at("/sessions/w1/work/chat", "n")).toBeUndefined();
    expect(at("/sessions/local/work", "/")).toBeUndefined();
    expect(at("/", "n", { inField: true })).toBeUndefined();
    expect(at("/", "n", { modified: true })).toBeUndefined();
    expect(at("/", "n", { loggedIn: false })).toBeUndefined();
    expect(at("/", "x")).toBeUndefined();
  });
});
