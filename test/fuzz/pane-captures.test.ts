import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ChatRole, Cli } from "../../gen/staragent/v1/session_pb.js";
import {
  claudeScreenPrompt,
  claudeScreenWorking,
  claudeTitleWorking,
} from "../../services/node/agents/claude/screen.js";
import { codexScreenPrompt, codexScreenWorking, codexTitleSignal } from "../../services/node/agents/codex/screen.js";
import { opencodeScreenPrompt, opencodeScreenWorking } from "../../services/node/agents/opencode/screen.js";
import type { ParsedMessage } from "../../services/node/chat/chat-parser.js";
import { MessageIds } from "../../services/node/chat/message-ids.js";
import { CHAT_PARSERS, chatParserFor } from "../../services/node/chat/parser-registry.js";
import { fixtureFiles, fuzz, mutateText, type Random } from "./fuzz.js";

const AGENTS = join(import.meta.dirname, "../../services/node/agents");
/** Every screen the project has a fixture of (status screens and chat transcripts, every CLI). */
const SCREENS = fixtureFiles([AGENTS], ".screen.txt").map(([, text]) => text);
/** Pane titles as the CLIs set them (FORMATS.md), mutated below. */
const TITLES = [
  "◐ Claude Code",
  "✳ Claude Code",
  "⠋ fix tests | ~/proj",
  "[ ! ] Action Required | proj",
  "opencode",
  "",
];
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
  it("prompt and spinner detectors never throw and answer a prompt with text", async () => {
    await fuzz("screen detectors", screen, (text) => {
      for (const prompt of [claudeScreenPrompt(text), codexScreenPrompt(text), opencodeScreenPrompt(text)]) {
        expect(prompt === undefined || typeof prompt.text === "string").toBe(true);
      }
      for (const working of [claudeScreenWorking(text), codexScreenWorking(text), opencodeScreenWorking(text)]) {
        expect(typeof working).toBe("boolean");
      }
    });
  });

  it("title detectors never throw", async () => {
    await fuzz(
      "title detectors",
      (r) => (r.chance(0.8) ? mutateText(r, r.pick(TITLES)) : r.text(200)),
      (title) => {
        expect(typeof claudeTitleWorking(title)).toBe("boolean");
        expect(["working", "approval", "none"]).toContain(codexTitleSignal(title));
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
