import { describe, expect, it } from "vitest";
import { defaultNodeName } from "./main.js";

describe("defaultNodeName", () => {
  it("turns a host name into a node id", () => {
    expect(defaultNodeName("Build-Box.lan")).toBe("build-box-lan");
  });

  it("drops leading characters a node id cannot start with", () => {
    expect(defaultNodeName("42-worker")).toBe("worker");
  });

  it("falls back to 'node' when nothing usable is left or the name is reserved", () => {
    expect(defaultNodeName("1234")).toBe("node");
    expect(defaultNodeName("local")).toBe("node");
  });

  it("keeps within 63 characters", () => {
    expect(defaultNodeName(`w${"x".repeat(80)}`)).toHaveLength(63);
  });
});
