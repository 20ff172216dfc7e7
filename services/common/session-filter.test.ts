import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { Cli, SessionSchema, SessionStatus, SessionType } from "../../gen/staragent/v1/session_pb.js";
import { parseSessionFilter } from "./session-filter.js";

const sessions = [
  create(SessionSchema, { tmuxSession: "w", status: SessionStatus.WORKING, type: SessionType.AGENT, cli: Cli.CLAUDE }),
  create(SessionSchema, { tmuxSession: "r", status: SessionStatus.REVIEW, type: SessionType.AGENT, cli: Cli.CODEX }),
  create(SessionSchema, { tmuxSession: "s", status: SessionStatus.IDLE, type: SessionType.SYSTEM, cli: Cli.OTHER }),
];
/** The `cli=` names a machine's agent registry would pass. */
const CLI_NAMES: ReadonlyMap<string, Cli> = new Map([
  ["claude", Cli.CLAUDE],
  ["codex", Cli.CODEX],
  ["other", Cli.OTHER],
]);
const matching = (filter: string) => sessions.filter(parseSessionFilter(filter, CLI_NAMES)).map((s) => s.tmuxSession);

describe("parseSessionFilter", () => {
  it("matches everything when empty", () => {
    expect(matching("")).toEqual(["w", "r", "s"]);
    expect(matching("   ")).toEqual(["w", "r", "s"]);
  });

  it("needs every term to match, and a term may list values", () => {
    expect(matching("status=working,review")).toEqual(["w", "r"]);
    expect(matching("status=working,review cli=codex")).toEqual(["r"]);
    expect(matching("type=system")).toEqual(["s"]);
    expect(matching("type=agent  status=idle")).toEqual([]);
  });

  it.each(["status", "status=", "status=busy", "colour=red", "cli=claude,", "x".repeat(513)])(
    "refuses %j with INVALID_ARGUMENT naming the filter",
    (filter) => {
      let error: ConnectError | undefined;
      try {
        parseSessionFilter(filter, CLI_NAMES);
      } catch (err) {
        error = ConnectError.from(err);
      }
      expect(error?.code).toBe(Code.InvalidArgument);
      expect(error?.rawMessage).toMatch(/^filter: /);
    },
  );

  it("takes its cli= names from the caller and lists them when a term is not understood", () => {
    expect(matching("cli=other")).toEqual(["s"]);
    expect(() => parseSessionFilter("cli=opencode", CLI_NAMES)).toThrow(
      /cli=opencode.*is not understood; .*cli=claude\|codex\|other$/,
    );
  });
});
