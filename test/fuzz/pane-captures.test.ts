import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChatRole, Cli } from "../../gen/staragent/v1/session_pb.js";
import type { AgentContext } from "../../services/node/agents/agent.js";
import { createBuiltInAgents } from "../../services/node/agents/registry.js";
import type { ParsedMessage } from "../../services/node/chat/chat-parser.js";
import { MessageIds } from "../../services/node/chat/message-ids.js";
import { CHAT_PARSERS, chatParserFor } from "../../services/node/chat/parser-registry.js";
import { testPane } from "../support/panes.js";
import { fixtureFiles, fuzz, mutateText, type Random } from "./fuzz.js";

const AGENTS = join(import.meta.dirname, "../../services/node/agents");
/** Every screen the project has a fixture of (status screens and chat transcripts, every CLI). */
const SCREENS = fixtureFiles([AGENTS], ".screen.txt").map(([, text]) => text);
/** Pane titles as the CLIs set them (docs/status.md, "Per CLI"), mutated below. */
const TITLES = [
  "◐ Claude Code",
  "✳ Claude Code",
  "⠋ fix tests | ~/proj",
  "[ ! ] Action Required | proj",
  "opencode",
  "◇  Ready (proj)",
  "✦  Working… (proj)",
  "✋  Action Required (proj)",
  "",
];
const TURNS = new Set(["active", "completed", "interrupted", "none"]);
/** A HOME with no native state: every module decides from the screen and the title alone. */
let home = "";
beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), "sa-fuzz-panes-"));
});
afterAll(async () => {
  await rm(home, { recursive: true, force: true });
});

/** What a module is given for a pane showing `screen` under `title`, with no native state. */
function paneContext(screen: string, title: string): AgentContext {
  const processInfo = { pid: 2 ** 22 + 1, ppid: 1, comm: "node", argv: ["node", "agent"], startTicks: 1 };
  return {
    pane: testPane({ paneTitle: title, paneCurrentPath: home, panePid: processInfo.pid }),
    process: processInfo,
    processStart: new Date(),
    env: async () => ({ HOME: home }),
    screen: async () => screen,
    visibleScreen: async () => `${title}\n${screen}`,
    siblings: [],
  };
}
const ROLES = new Set([ChatRole.USER, ChatRole.ASSISTANT, ChatRole.TOOL, ChatRole.SYSTEM]);

/** A screen: a fixture mutated, two fixtures spliced, or (now and then) noise. */
function screen(r: Random): string {
  if (r.chance(0.05)) return r.text(3000);
  const base = r.pick(SCREENS);
  if (r.chance(0.15)) {
    const other = r.pick(SCREENS);
    return base.slice(0, r.int(base.length + 1)) + other.slice(r.int(other.length + 1));
  }
  return mutateText(r, base);
}

function wellFormedMessage(m: ParsedMessage): boolean {
  return (
    ROLES.has(m.role) &&
    typeof m.text === "string" &&
    (m.toolName === undefined || typeof m.toolName === "string") &&
    (m.toolTarget === undefined || typeof m.toolTarget === "string")
  );
}

describe("fuzz: pane captures", () => {
  it("every module's prompt reader never throws and reads a prompt with a question and choices", async () => {
    const modules = createBuiltInAgents().modules;
    await fuzz("prompt readers", screen, (text) => {
      for (const module of modules) {
        const prompt = module.readPrompt?.(text, "");
        expect(prompt === undefined || (typeof prompt.question === "string" && Array.isArray(prompt.choices))).toBe(
          true,
        );
      }
    });
  });

  it("every module's screen and title reading (with no native state) never throws and gives a turn", async () => {
    const modules = createBuiltInAgents().modules;
    await fuzz(
      "screen and title signals",
      (r) => ({ text: screen(r), title: r.chance(0.8) ? mutateText(r, r.pick(TITLES)) : r.text(200) }),
      async ({ text, title }) => {
        for (const module of modules) {
          const signals = await module.observe(paneContext(text, title));
          expect(TURNS.has(signals.turn), `${module.name}: ${signals.detail}`).toBe(true);
          expect(signals.prompt === undefined || typeof signals.prompt.text === "string").toBe(true);
        }
      },
    );
  });

  it("every chat parser (and the plain one) never throws and gives well-formed messages", async () => {
    const parsers = [...CHAT_PARSERS.values(), chatParserFor(Cli.OTHER)];
    const ids = new MessageIds();
    await fuzz("chat parsers", screen, (text) => {
      const lines = text.split("\n");
      for (const parser of parsers) {
        const messages = parser.parse(lines);
        expect(messages.every(wellFormedMessage)).toBe(true);
        // Numbering the same chat read after read (as GetChat does) must hold up too.
        const chat = ids.number(`fuzz-${parser.cli}`, messages);
        expect(chat.messages.map((m) => m.id)).toEqual(messages.map((_, i) => chat.nextId - messages.length + i));
      }
    });
  });
});
