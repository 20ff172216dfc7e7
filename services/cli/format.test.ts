import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import {
  Cli,
  SessionOrigin,
  SessionSchema,
  SessionStatus,
  SessionType,
  StatusReason,
} from "../../gen/staragent/v1/session_pb.js";
import { ago, enumWord, sessionTable } from "./format.js";

describe("format", () => {
  it("writes enum values as short lower-case words", () => {
    expect(enumWord(SessionStatus, SessionStatus.WORKING)).toBe("working");
    expect(enumWord(StatusReason, StatusReason.INPUT_PROMPT)).toBe("input-prompt");
    expect(enumWord(SessionStatus, 99)).toBe("unspecified");
  });

  it("says how long ago in the largest whole unit", () => {
    const now = 1_800_000_000_000;
    expect(ago(new Date(now - 5_000), now)).toBe("5s ago");
    expect(ago(new Date(now - 125_000), now)).toBe("2m ago");
    expect(ago(new Date(now - 3 * 3600_000), now)).toBe("3h ago");
    expect(ago(new Date(now - 49 * 3600_000), now)).toBe("2d ago");
    expect(ago(new Date(now + 10_000), now)).toBe("0s ago");
  });

  it("aligns one row per session, naming remote sessions NODE/NAME and marking unreachable ones", () => {
    const base = {
      type: SessionType.AGENT,
      origin: SessionOrigin.CREATED,
      cli: Cli.CODEX,
      status: SessionStatus.REVIEW,
      statusReason: StatusReason.UNSEEN_COMPLETION,
      lastActivityTime: timestampFromDate(new Date()),
    };
    const table = sessionTable([
      create(SessionSchema, {
        ...base,
        node: "local",
        tmuxSession: "fix-bug",
        cwd: "/src/app",
        usage: { contextTokens: 160_196n, contextWindow: 258_400n },
      }),
      create(SessionSchema, {
        ...base,
        node: "w1",
        tmuxSession: "long-session-name",
        cwd: "/w",
        nodeUnreachable: true,
      }),
    ]);
    const lines = table.split("\n");
    expect(lines).toHaveLength(3);
    expect(lines[0]?.split(/ {2,}/)).toEqual([
      "SESSION",
      "STATUS",
      "REASON",
      "CLI",
      "CONTEXT",
      "TYPE",
      "ORIGIN",
      "ACTIVE",
      "CWD",
    ]);
    expect(lines[1]?.split(/ {2,}/)).toEqual([
      "fix-bug",
      "review",
      "unseen-completion",
      "codex",
      "62%",
      "agent",
      "created",
      expect.stringMatching(/^\d+s ago$/),
      "/src/app",
    ]);
    expect(lines[2]?.split(/ {2,}/).slice(0, 2)).toEqual(["w1/long-session-name", "review?"]);
    // Columns line up: each header starts where its values start.
    for (const header of ["STATUS", "REASON", "CLI", "CWD"]) {
      const column = lines[0]?.indexOf(header);
      expect(lines[1]?.[(column ?? 0) - 1]).toBe(" ");
      expect(lines[1]?.[column ?? 0]).not.toBe(" ");
      expect(lines[2]?.[column ?? 0]).not.toBe(" ");
    }
  });
});
