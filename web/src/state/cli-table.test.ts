import { describe, expect, it } from "vitest";
import { Cli } from "../../../gen/staragent/v1/session_pb.js";
import { CLI_KEYS, CLI_TABLE, CREATE_PRESETS, cliKey, cliName } from "./cli-table.js";
import { CLI_FILTERS } from "./session-filter.js";

describe("the CLI table", () => {
  it("has an entry for every value of the proto's Cli enum", () => {
    const values = Object.values(Cli).filter((v): v is Cli => typeof v === "number");
    expect(Object.keys(CLI_TABLE).map(Number).sort()).toEqual([...values].sort());
  });

  it("gives the list's filter its keywords, each once, with other last", () => {
    expect(CLI_KEYS).toEqual([
      "claude",
      "codex",
      "opencode",
      "shell",
      "gemini",
      "qwen",
      "copilot",
      "pi",
      "droid",
      "kilo",
      "other",
    ]);
    expect(CLI_FILTERS).toEqual([
      "all",
      "claude",
      "codex",
      "opencode",
      "shell",
      "gemini",
      "qwen",
      "copilot",
      "pi",
      "droid",
      "kilo",
      "other",
    ]);
    expect(cliKey(Cli.UNSPECIFIED)).toBe("other");
    expect(cliKey(99 as Cli)).toBe("other");
  });

  it("names each CLI for people, and a value from a newer Hub as other", () => {
    expect(
      [
        Cli.CLAUDE,
        Cli.CODEX,
        Cli.OPENCODE,
        Cli.SHELL,
        Cli.OTHER,
        Cli.GEMINI,
        Cli.QWEN,
        Cli.COPILOT,
        Cli.PI,
        Cli.KILO,
        Cli.DROID,
      ].map(cliName),
    ).toEqual([
      "Claude Code",
      "Codex",
      "opencode",
      "shell",
      "other",
      "Gemini CLI",
      "Qwen Code",
      "Copilot CLI",
      "pi",
      "Kilo CLI",
      "Factory droid",
    ]);
    expect(cliName(99 as Cli)).toBe("other");
  });

  it("lists New session's presets per CLI, then the person's own command", () => {
    expect(CREATE_PRESETS.map((p) => [p.id, p.label, p.argv.join(" ")])).toEqual([
      ["claude", "Claude Code", "claude"],
      ["codex", "Codex", "codex"],
      ["codex-yolo", "Codex --yolo", "codex --yolo"],
      ["opencode", "opencode", "opencode"],
      ["shell", "A shell", ""],
      ["gemini", "Gemini CLI", "gemini"],
      ["qwen", "Qwen Code", "qwen"],
      ["copilot", "Copilot CLI", "copilot"],
      ["pi", "pi", "pi"],
      ["droid", "Factory droid", "droid"],
      ["kilo", "Kilo CLI", "kilo"],
      ["custom", "Your own command", ""],
    ]);
  });
});
