import { mkdtemp, readdir, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ChatMessageSource, ChatRole, Cli } from "../../gen/staragent/v1/session_pb.js";
import type { ChatHistoryReader, ChatLogRef } from "../../services/node/agents/chat-history.js";
import { createBuiltInAgents } from "../../services/node/agents/registry.js";
import type { ParsedMessage } from "../../services/node/chat/chat-parser.js";
import type { AgentFixtureSetup } from "./agent-fixture-setup.js";

/**
 * One chat-history fixture (`agents/<cli>/fixtures/chat-history/<version>/cases.json`): a native log
 * as the CLI wrote it (a JSONL log cut after `records` lines, or opencode rows), the screen shown at
 * the same moment, and the merged chat a person reading both would list (`<name>.expected.json`).
 */
export interface HistoryCase {
  readonly name: string;
  /** What the case shows, for people reading the table. */
  readonly what: string;
  /** The log file, relative to the case's folder (opencode: a `{table,row}` dump). */
  readonly log: string;
  /** Lines of a JSONL log written so far (absent: all). */
  readonly records?: number;
  /** A capture file in the case's folder, or `inline:<text>`. */
  readonly screen: string;
}

/** A merged message as fixtures spell it. */
export interface PlainMergedMessage {
  readonly source: string;
  readonly role: string;
  readonly text: string;
  readonly toolName?: string;
  readonly toolTarget?: string;
}

/** Every case folder (one per version) under `root` (`agents/<cli>/fixtures/chat-history`), with its cases. */
export async function historyCaseFolders(
  root: string,
): Promise<{ dir: string; version: string; cases: HistoryCase[] }[]> {
  const versions = (await readdir(root, { withFileTypes: true }))
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  return Promise.all(
    versions.map(async (version) => {
      const dir = join(root, version);
      const cases = JSON.parse(await readFile(join(dir, "cases.json"), "utf8")) as HistoryCase[];
      return { dir, version, cases };
    }),
  );
}

/** The screen lines of a case, as `capture-pane -p -J` printed them. */
export async function caseScreen(dir: string, screen: string): Promise<string[]> {
  const text = screen.startsWith("inline:")
    ? screen.slice("inline:".length)
    : await readFile(join(dir, screen), "utf8");
  if (text === "") return [];
  return (text.endsWith("\n") ? text.slice(0, -1) : text).split("\n");
}

/**
 * Puts a case's native log into `scratch` as the CLI would have it (by the module's fixture setup, else
 * as a JSONL log cut after `records` lines), with a fresh reader for it (the module's, from a fresh
 * registry, so nothing is kept from an earlier read).
 */
export async function placeCaseLog(
  cli: Cli,
  setup: AgentFixtureSetup | undefined,
  dir: string,
  c: HistoryCase,
  scratch: string,
): Promise<{ reader: ChatHistoryReader; log: ChatLogRef }> {
  const reader = createBuiltInAgents().historyFor(cli);
  if (!reader) throw new Error(`${Cli[cli]} keeps no native log to read`);
  const source = join(dir, c.log);
  const log = setup?.placeHistoryLog
    ? await setup.placeHistoryLog(source, c.records, scratch)
    : await placeJsonl(source, c.records, scratch);
  return { reader, log };
}

/** A JSONL log's first `records` lines (all when undefined) in a new folder under `scratch`. */
async function placeJsonl(source: string, records: number | undefined, scratch: string): Promise<ChatLogRef> {
  const lines = (await readFile(source, "utf8")).split(/(?<=\n)/);
  const path = join(await mkdtemp(join(scratch, "log-")), "log.jsonl");
  await writeFile(path, lines.slice(0, records ?? lines.length).join(""));
  return { path, session: "" };
}

/** A scratch folder for placed logs. */
export function scratchFolder(): Promise<string> {
  return mkdtemp(join(tmpdir(), "sa-chat-history-"));
}

/** A merged message in the fixtures' spelling (tool fields only for tools). */
export function plainMerged(message: ParsedMessage, source: ChatMessageSource): PlainMergedMessage {
  const role = (ChatRole[message.role] ?? "unspecified").toLowerCase();
  const from = (ChatMessageSource[source] ?? "unspecified").toLowerCase();
  return message.role === ChatRole.TOOL
    ? { source: from, role, toolName: message.toolName ?? "", toolTarget: message.toolTarget ?? "", text: message.text }
    : { source: from, role, text: message.text };
}
