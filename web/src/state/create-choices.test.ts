import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { SessionSchema } from "../../../gen/staragent/v1/session_pb.js";
import { CLI_TABLE, CREATE_PRESETS } from "./cli-table.js";
import {
  type CreateForm,
  checkCreate,
  knownFolders,
  LAST_CHOICE_KEY,
  presetArgv,
  presetCli,
  readLastChoices,
  rememberChoices,
  startedSentence,
  suggestedBranch,
} from "./create-choices.js";
import { MAX_RECENT_FOLDERS } from "./recent-folders.js";

/** A Map-backed localStorage. */
function memoryStorage(text?: string) {
  const map = new Map<string, string>(text === undefined ? [] : [[LAST_CHOICE_KEY, text]]);
  return { map, getItem: (k: string) => map.get(k) ?? null, setItem: (k: string, v: string) => void map.set(k, v) };
}

const FORM: CreateForm = {
  name: "fix-login",
  cwd: "~/project",
  preset: "claude",
  custom: "",
  worktree: false,
  branch: "",
  resume: false,
  resumeId: "",
};

describe("the create dialog's last choices", () => {
  it("reads what was stored and leaves out what is unreadable or of the wrong kind", () => {
    expect(
      readLastChoices(
        memoryStorage(
          '{"node":"box","cwd":"/srv","preset":"shell","custom":"make","recent":[{"node":"box","cwd":"/a"},5,"/old-form",{"node":"w1","cwd":"/b"}]}',
        ),
      ),
    ).toEqual({
      node: "box",
      cwd: "/srv",
      preset: "shell",
      custom: "make",
      recent: [
        { node: "box", cwd: "/a" },
        { node: "w1", cwd: "/b" },
      ],
    });
    expect(readLastChoices(memoryStorage('{"preset":"no-such-cli","node":7,"recent":"x"}'))).toEqual({ recent: [] });
    expect(readLastChoices(memoryStorage("{not json"))).toEqual({ recent: [] });
    expect(readLastChoices(memoryStorage("null"))).toEqual({ recent: [] });
    expect(readLastChoices(undefined)).toEqual({ recent: [] });
  });

  it("remembers a started session's folder first among at most MAX_RECENT_FOLDERS recent ones of its node", () => {
    const storage = memoryStorage();
    const recent = Array.from({ length: MAX_RECENT_FOLDERS }, (_, i) => ({ node: "local", cwd: `/f${i}` }));
    const w1 = { node: "w1", cwd: "/f3" };
    rememberChoices(storage, { node: "local", cwd: "/f3", preset: "custom", custom: "npm test" }, [...recent, w1]);
    const read = readLastChoices(storage);
    expect(read.recent[0]).toEqual({ node: "local", cwd: "/f3" });
    expect(read.recent.filter((r) => r.node === "local")).toHaveLength(MAX_RECENT_FOLDERS);
    expect(read.recent.filter((r) => r.cwd === "/f3")).toEqual([{ node: "local", cwd: "/f3" }, w1]);
    rememberChoices(storage, { node: "local", cwd: "/new", preset: "custom", custom: "" }, read.recent);
    expect(readLastChoices(storage).recent).toEqual([
      { node: "local", cwd: "/new" },
      ...read.recent.filter((r) => r.node === "local").slice(0, MAX_RECENT_FOLDERS - 1),
      w1,
    ]);
    const full = {
      getItem: () => null,
      setItem: () => {
        throw new Error("QuotaExceededError");
      },
    };
    expect(() => rememberChoices(full, { node: "local", cwd: "/x", preset: "shell", custom: "" }, [])).not.toThrow();
  });
});

describe("checkCreate", () => {
  it("sends a well-formed form with its preset's arguments", () => {
    const claude = CREATE_PRESETS.find((p) => p.id === "claude");
    expect(checkCreate(FORM)).toEqual({ argv: [...(claude?.argv ?? [])], cwd: "~/project" });
    expect(checkCreate({ ...FORM, preset: "custom", custom: "npm run 'dev server'" })).toEqual({
      argv: ["npm", "run", "dev server"],
      cwd: "~/project",
    });
  });

  it("starts in the node's home folder when the folder is left empty, as the picker shows it", () => {
    expect(checkCreate({ ...FORM, cwd: "  " })).toMatchObject({ cwd: "~" });
    expect(checkCreate({ ...FORM, cwd: " /srv/app " })).toMatchObject({ cwd: "/srv/app" });
  });

  it("names the first thing to fix and the field to focus", () => {
    expect(checkCreate({ ...FORM, name: "has space" })).toMatchObject({ focus: "#create-name" });
    expect(checkCreate({ ...FORM, cwd: "project" })).toMatchObject({ focus: "#create-cwd" });
    expect(checkCreate({ ...FORM, preset: "custom", custom: "echo 'open" })).toMatchObject({
      focus: "#create-command",
    });
    expect(checkCreate({ ...FORM, preset: "custom", custom: "  " })).toEqual({
      error: "Type the command to run, or pick a preset.",
      focus: "#create-command",
    });
    expect(checkCreate({ ...FORM, worktree: true, branch: " " })).toMatchObject({ focus: "#create-branch" });
    expect(checkCreate({ ...FORM, resume: true })).toEqual({
      error: "Pick the conversation to resume, or untick Resume.",
    });
    expect(checkCreate({ ...FORM, resume: true, resumeId: "c1" })).not.toHaveProperty("error");
    expect(checkCreate({ ...FORM, name: "bad name", cwd: "also bad" })).toMatchObject({ focus: "#create-name" });
  });
});

describe("the create dialog's helpers", () => {
  it("knows each preset's CLI, none for a command of one's own", () => {
    for (const [cli, info] of Object.entries(CLI_TABLE)) {
      for (const p of info.presets) expect(presetCli(p.id)).toBe(Number(cli));
    }
    expect(presetCli("custom")).toBeUndefined();
    expect(presetArgv("custom", "a b")).toEqual({ argv: ["a", "b"] });
  });

  it("suggests a branch from the name", () => {
    expect(suggestedBranch("--fix_it")).toBe("fix_it");
  });

  it("says where a session started, and on a worktree its branch and folder", () => {
    expect(startedSentence("fix", "local")).toBe("Started fix on local.");
    expect(startedSentence("fix", "box", { branch: "fix", path: "/p/.worktrees/fix" })).toBe(
      "Started fix on box, on branch fix in /p/.worktrees/fix.",
    );
  });

  it("suggests a node's session folders, newest activity first, each once", () => {
    const at = (seconds: number) => ({ seconds: BigInt(seconds), nanos: 0 });
    const sessions = [
      create(SessionSchema, { node: "local", cwd: "/old", lastActivityTime: at(10) }),
      create(SessionSchema, { node: "local", cwd: "/new", lastActivityTime: at(30) }),
      create(SessionSchema, { node: "local", cwd: "/old", lastActivityTime: at(20) }),
      create(SessionSchema, { node: "other", cwd: "/elsewhere", lastActivityTime: at(40) }),
      create(SessionSchema, { node: "local", cwd: "", lastActivityTime: at(50) }),
    ];
    expect(knownFolders(sessions, "local")).toEqual(["/new", "/old"]);
  });
});
