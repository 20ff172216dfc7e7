import { describe, expect, it } from "vitest";
import { Cli } from "../../../gen/staragent/v1/session_pb.js";
import { CLI_KEYS, CLI_TABLE, type CliInfo, CREATE_PRESETS, cliKey, cliName } from "./cli-table.js";
import { CLI_FILTERS } from "./session-filter.js";

/** Every value of the proto's Cli enum. */
const VALUES = Object.values(Cli)
  .filter((v): v is Cli => typeof v === "number")
  .sort((a, b) => a - b);
/** The table, looked up by any value. */
const TABLE: Readonly<Record<Cli, CliInfo>> = CLI_TABLE;
/** The values that name a program (not UNSPECIFIED, not OTHER), in the proto's numeric order. */
const PROGRAMS = VALUES.filter((v) => v !== Cli.UNSPECIFIED && v !== Cli.OTHER);

// The table against the Node's agent registry (each module's keyword, a preset it recognises) is
// test/foundation/cli-table.test.ts: the dashboard may not import the registry.
describe("the CLI table", () => {
  it("has an entry for every value of the proto's Cli enum", () => {
    expect(Object.keys(CLI_TABLE).map(Number).sort()).toEqual([...VALUES].sort());
  });

  it("gives the list's filter each program's keyword once, in table order, with other last", () => {
    expect(CLI_KEYS).toEqual([...PROGRAMS.map((v) => TABLE[v].key), "other"]);
    expect(new Set(CLI_KEYS).size).toBe(CLI_KEYS.length);
    expect(CLI_FILTERS).toEqual(["all", ...CLI_KEYS]);
    expect(cliKey(Cli.UNSPECIFIED)).toBe("other");
    expect(cliKey(99 as Cli)).toBe("other");
  });

  it("names each program for people, each differently, and a value from a newer Hub as other", () => {
    const names = PROGRAMS.map(cliName);
    expect(names.every((n) => n !== "" && n !== "other")).toBe(true);
    expect(new Set(names).size).toBe(names.length);
    expect(cliName(Cli.OTHER)).toBe("other");
    expect(cliName(99 as Cli)).toBe("other");
  });

  it("lists New session's presets per CLI in table order, then the person's own command", () => {
    expect(CREATE_PRESETS).toEqual([
      ...PROGRAMS.flatMap((v) => TABLE[v].presets),
      { id: "custom", label: "Your own command", argv: [] },
    ]);
    expect(new Set(CREATE_PRESETS.map((p) => p.id)).size).toBe(CREATE_PRESETS.length);
    // An argv is run as it is, never through a shell: no element holds a space.
    expect(CREATE_PRESETS.every((p) => p.argv.every((a) => a !== "" && !/\s/.test(a)))).toBe(true);
  });
});
