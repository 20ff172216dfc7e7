import { appendFile, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadFixtureSetup } from "../../../test/support/agent-fixture-setup.js";
import {
  caseScreen,
  type HistoryCase,
  historyCaseFolders,
  type PlainMergedMessage,
  placeCaseLog,
  plainMerged,
  scratchFolder,
} from "../../../test/support/chat-history-fixtures.js";
import { answerLogChat } from "../chat/log-chat.js";
import type { HistoryMessage } from "./chat-history.js";
import { createBuiltInAgents } from "./registry.js";

/** Page sizes the paging check walks the whole log with: tiny pages split calls from their results. */
const PAGE_SIZES = [1, 2, 3];
/** A page size that holds every message of a fixture. */
const WHOLE = 500;

let scratch = "";
beforeAll(async () => {
  scratch = await scratchFolder();
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** Every module of the registry that reads a native log, over its `fixtures/chat-history/<version>/` cases. */
for (const module of createBuiltInAgents().modules.filter((m) => m.history !== undefined)) {
  const name = module.name;
  const setup = await loadFixtureSetup(import.meta.dirname, name);
  const place = (dir: string, c: HistoryCase) => placeCaseLog(module.cli, setup, dir, c, scratch);
  for (const { dir, version, cases } of await historyCaseFolders(
    join(import.meta.dirname, name, "fixtures/chat-history"),
  )) {
    // Logs written line by line (JSONL); a database (placed by the module's setup) is not.
    const jsonl = cases.filter((c) => setup?.placeHistoryLog === undefined && c.records === undefined);
    describe(`${name} ${version} chat history`, () => {
      it.each(jsonl.map((c) => [c.name, c] as const))(
        "%s: read while it is written, line by line, it says what a fresh read says",
        async (_name, c) => {
          const lines = (await readFile(join(dir, c.log), "utf8")).split(/(?<=\n)/);
          const { reader, log } = await place(dir, { ...c, records: 0 });
          for (let n = 1; n <= lines.length; n++) {
            await appendFile(log.path, lines[n - 1] ?? "");
            const followed = await reader.read(log, { limit: WHOLE });
            const { reader: fresh } = await place(dir, { ...c, records: n });
            const read = await fresh.read(log, { limit: WHOLE });
            expect(followed?.messages, `after ${n} lines`).toEqual(read?.messages);
          }
        },
      );

      it.each(cases.map((c) => [c.name, c] as const))("%s", async (name, c) => {
        const { reader, log } = await place(dir, c);
        const screen = module.chatParser.parse(await caseScreen(dir, c.screen));
        const window = await reader.read(log, { limit: WHOLE });
        if (!window) throw new Error(`${c.log}: the reader could not read it`);
        const answer = answerLogChat(window, screen, WHOLE, undefined);
        const expected = JSON.parse(await readFile(join(dir, `${name}.expected.json`), "utf8")) as PlainMergedMessage[];
        expect(
          answer.messages.map((m) => plainMerged(m.message, m.source)),
          c.what,
        ).toEqual(expected);
        // Ids increase along the chat; the log's messages come first, the screen's tail after them.
        const ids = answer.messages.map((m) => m.id);
        expect(ids).toEqual([...ids].sort((a, b) => a - b));
        expect(new Set(ids).size).toBe(ids.length);
        expect(answer.messages.map((m) => m.logged)).toEqual(answer.messages.map((_, i) => i < window.messages.length));
        expect(answer.hasMore).toBe(false);
      });

      it.each(cases.map((c) => [c.name, c] as const))(
        "%s: paging back page by page gives the same messages under the same ids",
        async (_name, c) => {
          const { reader, log } = await place(dir, c);
          const whole = await reader.read(log, { limit: WHOLE });
          if (!whole) throw new Error(`${c.log}: the reader could not read it`);
          for (const size of PAGE_SIZES) {
            // A fresh reader per walk, so the pages are read from the file rather than the kept stretch.
            const { reader: fresh } = await place(dir, c);
            const pages: HistoryMessage[][] = [];
            let before: number | undefined;
            for (let guard = 0; guard <= whole.messages.length + 1; guard++) {
              const page = await fresh.read(log, { limit: size, before });
              if (!page) throw new Error("a page could not be read");
              pages.unshift([...page.messages]);
              if (!page.hasMore) break;
              expect(page.olderBefore).toBeLessThan(before ?? Number.POSITIVE_INFINITY);
              before = page.olderBefore;
            }
            expect(pages.flat(), `page size ${size}`).toEqual(whole.messages);
            // The same pages from a reader that keeps the whole log's newest stretch.
            const kept: HistoryMessage[][] = [];
            let keptBefore: number | undefined;
            for (let guard = 0; guard <= whole.messages.length + 1; guard++) {
              const page = await reader.read(log, { limit: size, before: keptBefore });
              if (!page) throw new Error("a page could not be read");
              kept.unshift([...page.messages]);
              if (!page.hasMore) break;
              keptBefore = page.olderBefore;
            }
            expect(kept.flat(), `page size ${size}, kept stretch`).toEqual(whole.messages);
          }
        },
      );

      it.each(cases.map((c) => [c.name, c] as const))(
        "%s: a newest page that grows one message at a time extends what was read",
        async (_name, c) => {
          const { reader, log } = await place(dir, c);
          const { reader: wholeReader } = await place(dir, c);
          const whole = await wholeReader.read(log, { limit: WHOLE });
          if (!whole) throw new Error(`${c.log}: the reader could not read it`);
          for (let size = 1; size <= whole.messages.length; size++) {
            const page = await reader.read(log, { limit: size });
            expect(page?.messages, `newest ${size}`).toEqual(whole.messages.slice(-(page?.messages.length ?? 0)));
            expect(page?.messages.length).toBeGreaterThanOrEqual(size);
          }
        },
      );
    });
  }
}
