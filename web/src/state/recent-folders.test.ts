import { describe, expect, it } from "vitest";
import { MAX_RECENT_FOLDERS, parseRecentFolders, recentOn, rememberFolder } from "./recent-folders.js";

describe("recent folders of the create dialog", () => {
  it("offers on a node only the folders used on that node", () => {
    let list = rememberFolder([], "local", "/home/me/proj");
    list = rememberFolder(list, "w1", "/srv/w1/proj");
    list = rememberFolder(list, "w2", "/srv/w2/proj");
    expect(recentOn(list, "w1")).toEqual([{ cwd: "/srv/w1/proj", label: "proj" }]);
    expect(recentOn(list, "local")).toEqual([{ cwd: "/home/me/proj", label: "proj" }]);
    expect(recentOn(list, "w3")).toEqual([]);
  });

  it("labels folders of the same name on one node by as much of their path as tells them apart", () => {
    let list = rememberFolder([], "local", "/home/me/a/proj");
    list = rememberFolder(list, "local", "/home/me/b/proj");
    list = rememberFolder(list, "local", "/home/me/notes");
    list = rememberFolder(list, "local", "/");
    expect(recentOn(list, "local").map((c) => c.label)).toEqual(["/", "notes", "b/proj", "a/proj"]);
  });

  it("moves a folder used again to the front and keeps at most the limit per node", () => {
    let list = rememberFolder([], "w1", "/keep");
    for (let i = 0; i < MAX_RECENT_FOLDERS + 3; i++) list = rememberFolder(list, "local", `/f${i}`);
    list = rememberFolder(list, "local", "/f5");
    const local = recentOn(list, "local").map((c) => c.cwd);
    expect(local).toHaveLength(MAX_RECENT_FOLDERS);
    expect(local[0]).toBe("/f5");
    expect(local.filter((c) => c === "/f5")).toHaveLength(1);
    expect(recentOn(list, "w1").map((c) => c.cwd)).toEqual(["/keep"]);
  });

  it("reads only well-formed stored entries, dropping bare paths whose node is unknown", () => {
    expect(
      parseRecentFolders([{ node: "w1", cwd: "/x" }, "/old/form", { node: "w1" }, { node: 3, cwd: "/y" }, null]),
    ).toEqual([{ node: "w1", cwd: "/x" }]);
    expect(parseRecentFolders("nonsense")).toEqual([]);
  });
});
