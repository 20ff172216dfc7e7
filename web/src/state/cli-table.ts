import { Cli } from "../../../gen/staragent/v1/session_pb.js";

/** A way to start a CLI from New session; `argv` is run directly, never through a shell string. */
export interface CreatePreset {
  readonly id: string;
  readonly label: string;
  readonly argv: readonly string[];
}

/** What the dashboard knows of one CLI. */
export interface CliInfo {
  /** The list filter's keyword (the same words ListSessions' filter uses). */
  readonly key: string;
  /** The CLI's name for people. */
  readonly name: string;
  /** The New session presets that start it, in the order shown. */
  readonly presets: readonly CreatePreset[];
}

/**
 * Every CLI the protocol names, in one exhaustive table: the list's filter, the names shown, and New
 * session's presets all come from here. A CLI added to the proto's `Cli` enum makes tsc ask for its
 * entry here, and nowhere else in the dashboard.
 */
export const CLI_TABLE = {
  [Cli.UNSPECIFIED]: { key: "other", name: "other", presets: [] },
  [Cli.CLAUDE]: {
    key: "claude",
    name: "Claude Code",
    presets: [{ id: "claude", label: "Claude Code", argv: ["claude"] }],
  },
  [Cli.CODEX]: {
    key: "codex",
    name: "Codex",
    presets: [
      { id: "codex", label: "Codex", argv: ["codex"] },
      { id: "codex-yolo", label: "Codex --yolo", argv: ["codex", "--yolo"] },
    ],
  },
  [Cli.OPENCODE]: {
    key: "opencode",
    name: "opencode",
    presets: [{ id: "opencode", label: "opencode", argv: ["opencode"] }],
  },
  [Cli.SHELL]: { key: "shell", name: "shell", presets: [{ id: "shell", label: "A shell", argv: [] }] },
  [Cli.OTHER]: { key: "other", name: "other", presets: [] },
  [Cli.GEMINI]: {
    key: "gemini",
    name: "Gemini CLI",
    presets: [{ id: "gemini", label: "Gemini CLI", argv: ["gemini"] }],
  },
  [Cli.QWEN]: {
    key: "qwen",
    name: "Qwen Code",
    presets: [{ id: "qwen", label: "Qwen Code", argv: ["qwen"] }],
  },
  [Cli.COPILOT]: {
    key: "copilot",
    name: "Copilot CLI",
    presets: [{ id: "copilot", label: "Copilot CLI", argv: ["copilot"] }],
  },
  [Cli.PI]: { key: "pi", name: "pi", presets: [{ id: "pi", label: "pi", argv: ["pi"] }] },
  [Cli.KILO]: {
    key: "kilo",
    name: "Kilo CLI",
    presets: [{ id: "kilo", label: "Kilo CLI", argv: ["kilo"] }],
  },
  [Cli.DROID]: {
    key: "droid",
    name: "Factory droid",
    presets: [{ id: "droid", label: "Factory droid", argv: ["droid"] }],
  },
  [Cli.CURSOR]: {
    key: "cursor",
    name: "Cursor agent",
    presets: [{ id: "cursor", label: "Cursor agent", argv: ["cursor-agent"] }],
  },
  [Cli.ANTIGRAVITY]: {
    key: "antigravity",
    name: "Antigravity",
    presets: [{ id: "antigravity", label: "Antigravity (agy)", argv: ["agy"] }],
  },
} as const satisfies Record<Cli, CliInfo>;

type Table = typeof CLI_TABLE;

/** A CLI's filter keyword. */
export type CliKey = Table[keyof Table]["key"];

/** The CLIs in the proto's order. */
const CLIS = Object.keys(CLI_TABLE).map(Number) as Cli[];

/** The filter keywords, each once, in the proto's order with "other" (everything unnamed) last. */
export const CLI_KEYS: readonly CliKey[] = [
  ...new Set(CLIS.map((c) => CLI_TABLE[c].key as CliKey).filter((k) => k !== "other")),
  "other",
];

/** The CLI's name for people ("other" for a value this dashboard does not know yet). */
export function cliName(cli: Cli): string {
  return (CLI_TABLE as Record<Cli, CliInfo>)[cli]?.name ?? "other";
}

/** The CLI's filter keyword ("other" for a value this dashboard does not know yet). */
export function cliKey(cli: Cli): CliKey {
  return ((CLI_TABLE as Record<Cli, CliInfo>)[cli]?.key as CliKey | undefined) ?? "other";
}

type Preset = Table[keyof Table]["presets"][number];

/** The id of a New session preset. */
export type PresetId = Preset["id"] | "custom";

/** New session's presets: every CLI's, in the proto's order, then a command of the person's own. */
export const CREATE_PRESETS: readonly (CreatePreset & { readonly id: PresetId })[] = [
  ...CLIS.flatMap((c): readonly Preset[] => CLI_TABLE[c].presets),
  { id: "custom", label: "Your own command", argv: [] },
];
