import { ChatRole, Cli } from "../../../../gen/staragent/v1/session_pb.js";
import type { ChatParser, ParsedMessage } from "../../chat/chat-parser.js";
import { cleanLines, indentOf, isBlank, isBlockArt, joinText } from "../../chat/screen-lines.js";

/**
 * opencode's session view (docs/chat.md "What each parser reads", 1.x TUI), a full-screen app on the alternate screen:
 *
 *   ┃  the prompt                  user messages: a panel with a `┃` left edge
 *      answer text                  assistant text, indented, no mark
 *      → Read src/main.ts           one-line tools: an icon, the tool, its target
 *   ┃  # Lists files               block tools: a `┃` panel whose first line is a `# title`
 *   ┃  $ ls -la                    (bash shows its command and output; edits show `← Edit path`;
 *                                 after an approval the bash panel has no `# title`)
 *      ▣  Build · model · 1.8s      turn footer: not a message
 *   ┃  Ask anything…               the prompt box, closed by `╹▀▀▀`, then the status row
 *
 * `△ Permission required … Allow once   Allow always   Reject` replaces the prompt box while asking.
 */
export const opencodeChatParser: ChatParser = {
  cli: Cli.OPENCODE,
  parse(raw) {
    const lines = cleanLines(raw);
    return parseLines(lines.slice(0, bottomChromeStart(lines)));
  },
};

const PANEL = /^\s*┃ ?(.*)$/;
const PROMPT_BOX_BOTTOM = /^\s*╹▀/;
const PERMISSION = /△ Permission required/;
const TURN_FOOTER = /^▣ /;
const THINKING = /^(?:⋯ Thinking|_?Thinking:_?)/;
/** Hints drawn under folded output. */
const FOLD_HINT = /^(?:Click to (?:expand|collapse)|…)$/;
/** One-line tools: icon, then `Tool target`. */
const INLINE_TOOL = /^([→←✱%◇◈⚙│$]) (.*)$/;
/** The name and version some builds draw above the conversation. */
const VERSION_BANNER = /^opencode \d+\.\d+\.\d+$/;
/** The divider a compaction draws (1.18); the summary under it, up to its footer, is not an answer. */
const COMPACTION_DIVIDER = /^─{3,} Compaction ─{3,}$/;
/** How far above the bottom the prompt box or a permission request may start. */
const BOTTOM_PANE_LINES = 40;

/** Where the prompt box (or the permission request that replaces it) starts. */
function bottomChromeStart(lines: readonly string[]): number {
  const floor = Math.max(0, lines.length - BOTTOM_PANE_LINES);
  let cut = lines.length;
  for (let i = lines.length - 1; i >= floor; i--) {
    const line = lines[i] ?? "";
    if (PROMPT_BOX_BOTTOM.test(line) || PERMISSION.test(line) || /Ask anything/.test(line)) {
      cut = panelStart(lines, i);
      break;
    }
  }
  return cut;
}

/** The first line of the `┃` panel that contains line `i` (or `i` itself outside a panel). */
function panelStart(lines: readonly string[], i: number): number {
  let start = PROMPT_BOX_BOTTOM.test(lines[i] ?? "") ? i - 1 : i;
  if (!PANEL.test(lines[start] ?? "")) return PROMPT_BOX_BOTTOM.test(lines[i] ?? "") ? i : start;
  while (start > 0 && PANEL.test(lines[start - 1] ?? "")) start--;
  return start;
}

function parseLines(lines: readonly string[]): ParsedMessage[] {
  const out: ParsedMessage[] = [];
  let prose: string[] = [];
  const flush = () => {
    const text = joinText(prose);
    if (text !== "") out.push({ role: ChatRole.ASSISTANT, text });
    prose = [];
  };
  let summary = false;
  for (let i = 0; i < lines.length; ) {
    const line = lines[i] ?? "";
    if (COMPACTION_DIVIDER.test(line.trim())) {
      flush();
      out.push({ role: ChatRole.SYSTEM, text: "Compaction" });
      summary = true;
      i++;
      continue;
    }
    if (summary) {
      // The compaction's summary runs up to its turn footer (`▣  Compaction · model · 71ms`).
      if (TURN_FOOTER.test(line.trim())) summary = false;
      i++;
      continue;
    }
    if (PANEL.test(line)) {
      const panel: string[] = [];
      for (; i < lines.length && PANEL.test(lines[i] ?? ""); i++) panel.push(PANEL.exec(lines[i] ?? "")?.[1] ?? "");
      flush();
      const message = panelMessage(panel.map((l) => l.replace(/^ /, "")));
      if (message) out.push(message);
      continue;
    }
    i++;
    const text = line.trim();
    if (TURN_FOOTER.test(text) || THINKING.test(text) || text.startsWith("~ ") || isBlockArt(line)) {
      flush();
      // The footer of an aborted turn says so: the one notice opencode draws outside a panel.
      if (TURN_FOOTER.test(text) && text.endsWith("· interrupted"))
        out.push({ role: ChatRole.SYSTEM, text: "Interrupted" });
      continue;
    }
    const tool = INLINE_TOOL.exec(text);
    if (tool) {
      flush();
      // Lines indented under a one-line tool are its output.
      const output: string[] = [];
      const column = indentOf(line);
      for (; i < lines.length && !isBlank(lines[i] ?? "") && indentOf(lines[i] ?? "") > column; i++) {
        output.push(lines[i] ?? "");
      }
      out.push({ ...inlineTool(tool[1] ?? "", tool[2] ?? ""), text: joinText(output) });
      continue;
    }
    if (VERSION_BANNER.test(text)) continue;
    prose.push(line);
  }
  flush();
  return out;
}

function panelMessage(panel: readonly string[]): ParsedMessage | undefined {
  const body = panel.map((l) => l.trimEnd());
  const first = body.find((l) => !isBlank(l))?.trim() ?? "";
  if (first === "" || THINKING.test(first) || PERMISSION.test(first)) return undefined;
  if (first.startsWith("# "))
    return blockTool(first.slice(2), body.slice(body.findIndex((l) => l.trim() === first) + 1));
  // Bash output after an approval is drawn in a `┃` panel like the user's prompt (only colours tell
  // them apart); in plain text it is the panel that opens with `$ command`.
  if (first.startsWith("$ ")) {
    return {
      role: ChatRole.TOOL,
      toolName: "bash",
      toolTarget: first.slice(2),
      text: joinText(body.slice(body.findIndex((l) => l.trim() === first) + 1)),
    };
  }
  if (first.startsWith("← ")) {
    const [name, ...target] = first.slice(2).split(" ");
    return {
      role: ChatRole.TOOL,
      toolName: (name ?? "").toLowerCase(),
      toolTarget: target.join(" "),
      text: joinText(body.slice(body.findIndex((l) => l.trim() === first) + 1)),
    };
  }
  return { role: ChatRole.USER, text: joinText(body.filter((l) => l.trim() !== "QUEUED")) };
}

/** A block tool: bash shows `$ command` then its output; writes and patches name their file. */
function blockTool(title: string, body: readonly string[]): ParsedMessage {
  const rest = body.filter((l) => !FOLD_HINT.test(l.trim()));
  const command = rest.findIndex((l) => l.trim().startsWith("$ "));
  if (command >= 0) {
    return {
      role: ChatRole.TOOL,
      toolName: "bash",
      toolTarget: (rest[command] ?? "").trim().slice(2),
      text: joinText(rest.slice(command + 1)),
    };
  }
  const file = /^(Wrote|Created|Deleted|Patched|Updated) (.+)$/.exec(title);
  if (file) {
    return {
      role: ChatRole.TOOL,
      toolName: file[1] === "Wrote" ? "write" : "apply_patch",
      toolTarget: file[2] ?? "",
      text: joinText(rest),
    };
  }
  const [name, ...args] = title.split(" ");
  return { role: ChatRole.TOOL, toolName: name ?? "", toolTarget: args.join(" "), text: joinText(rest) };
}

function inlineTool(icon: string, text: string): ParsedMessage {
  if (icon === "$") return { role: ChatRole.TOOL, toolName: "bash", toolTarget: text, text: "" };
  if (icon === "│") return { role: ChatRole.TOOL, toolName: "task", toolTarget: text.replace(/^Task /, ""), text: "" };
  const [name, ...args] = text.split(" ");
  let target = args.join(" ");
  if (icon === "✱") target = target.replace(/\s*\(\d+ match(?:es)?\)$/, "").replace(/^"(.*)"/, "$1");
  return { role: ChatRole.TOOL, toolName: (name ?? "").toLowerCase(), toolTarget: target, text: "" };
}
