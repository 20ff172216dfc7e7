import { describe, expect, it } from "vitest";
import { isLocalPath, parseRoute, sessionPath, splitSessionName } from "./routes.js";

describe("routes", () => {
  it("parses the dashboard's paths and writes session paths back", () => {
    expect(parseRoute("/")).toEqual({ page: "sessions", tab: "terminal" });
    expect(parseRoute("/nodes")).toEqual({ page: "nodes" });
    expect(parseRoute("/sessions/w1/fix-bug/chat")).toEqual({
      page: "sessions",
      session: { node: "w1", id: "fix-bug" },
      tab: "chat",
    });
    expect(parseRoute(sessionPath("local", "a b"))).toMatchObject({ session: { node: "local", id: "a b" } });
    expect(splitSessionName("nodes/w1/sessions/x")).toEqual({ node: "w1", id: "x" });
    expect(splitSessionName("sessions/x")).toBeUndefined();
  });

  it("follows only this dashboard's own paths after login", () => {
    expect(parseRoute("/login", "?next=%2Fsessions%2Flocal%2Fa")).toEqual({ page: "login", next: "/sessions/local/a" });
    for (const bad of [
      "https://evil.example/",
      "//evil.example/",
      "/\\evil.example",
      "javascript:alert(1)",
      "/login",
    ]) {
      expect(isLocalPath(bad)).toBe(false);
      expect(parseRoute("/login", `?next=${encodeURIComponent(bad)}`)).toEqual({ page: "login", next: "/" });
    }
  });
});
