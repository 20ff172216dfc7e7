import { describe, expect, it } from "vitest";
import { BoundedMap } from "./bounded-map.js";

describe("BoundedMap", () => {
  it("drops the oldest entry past its capacity", () => {
    const map = new BoundedMap<string, number>(2);
    map.set("a", 1).set("b", 2).set("c", 3);
    expect([...map]).toEqual([
      ["b", 2],
      ["c", 3],
    ]);
  });

  it("counts setting an existing key as making it the newest", () => {
    const map = new BoundedMap<string, number>(2);
    map.set("a", 1).set("b", 2).set("a", 10).set("c", 3);
    expect([...map]).toEqual([
      ["a", 10],
      ["c", 3],
    ]);
  });

  it("hands each dropped entry to onEvict, and only those", () => {
    const evicted: [string, number][] = [];
    const map = new BoundedMap<string, number>(1, (key, value) => evicted.push([key, value]));
    map.set("a", 1).set("a", 2).set("b", 3);
    map.delete("b");
    expect(evicted).toEqual([["a", 2]]);
    expect(map.size).toBe(0);
  });

  it("stays a Map: get, has, delete and clear work as usual", () => {
    const map = new BoundedMap<string, number>(3);
    map.set("a", 1);
    expect(map).toBeInstanceOf(Map);
    expect(map.get("a")).toBe(1);
    expect(map.has("b")).toBe(false);
    map.clear();
    expect(map.size).toBe(0);
  });
});
