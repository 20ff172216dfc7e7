import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PromptKind, SessionStatus, StatusReason } from "../../../gen/staragent/v1/session_pb.js";
import { loadFixtureSetup, type StatusFixtureCase } from "../../../test/support/agent-fixture-setup.js";
import { fixtureContext, fixtureScreen } from "../../../test/support/fixture-context.js";
import { decideStatus } from "../status/precedence.js";
import { createBuiltInAgents } from "./registry.js";

const HOUR_MS = 3_600_000;
/**
 * When the fixtures' CLI process started: before every record in them (their records carry their own
 * times, and a turn opened before the process started belongs to an earlier run).
 */
const FIXTURE_PROCESS_START_MS = Date.UTC(2025, 0, 1);
/** How long before the test a resumed case's process started: after its records, before its log was placed. */
const RESUMED_PROCESS_AGE_MS = 60_000;
const temps: string[] = [];

afterAll(async () => {
  await Promise.all(temps.map((d) => rm(d, { recursive: true, force: true })));
});

/**
 * Every module of the registry with status fixtures (`agents/<name>/fixtures/<version range>/`), set
 * up by its own `fixtures/setup.ts`: each case's native state and screen decide the status expected.
 */
for (const module of createBuiltInAgents().modules) {
  const cli = module.name;
  const root = join(import.meta.dirname, cli, "fixtures");
  const ranges = (await readdir(root, { withFileTypes: true }))
    .filter((e) => e.isDirectory() && !["chat", "chat-history", "usage"].includes(e.name))
    .map((e) => e.name)
    .sort();
  if (ranges.length === 0) continue;
  const setup = await loadFixtureSetup(import.meta.dirname, cli);
  for (const range of ranges) {
    const dir = join(root, range);
    const cases = JSON.parse(await readFile(join(dir, "cases.json"), "utf8")) as StatusFixtureCase[];
    describe(`${cli} ${range} fixtures`, () => {
      it.each(cases.map((c) => [c.name, c] as const))("%s", async (_name, fixture) => {
        if (!setup) throw new Error(`${cli} has status fixtures but no fixtures/setup.ts to place them`);
        const home = await mkdtemp(join(tmpdir(), `sa-fixture-${cli}-`));
        temps.push(home);
        const cwd = fixture.cwd ?? setup.cwd;
        const processStart = new Date(
          fixture.logOlderThanProcess
            ? Date.now() + HOUR_MS
            : fixture.resumed
              ? Date.now() - RESUMED_PROCESS_AGE_MS
              : FIXTURE_PROCESS_START_MS,
        );
        await setup.placeState(dir, home, fixture, processStart);
        const screen = await fixtureScreen(dir, fixture.screen);
        const context = fixtureContext({ home, cwd, setup, title: fixture.title ?? "", screen, processStart });
        const signals = await createBuiltInAgents().get(module.cli)?.observe(context);
        if (!signals) throw new Error(`${cli}: no module`);
        const decided = decideStatus(signals, fixture.seen ?? "");
        const got = {
          status: SessionStatus[decided.status],
          reason: StatusReason[decided.reason],
          ...(fixture.expect.completionId !== undefined ? { completionId: signals.completionId } : {}),
          ...(fixture.expect.lastUserTurn !== undefined ? { lastUserTurn: signals.lastUserTurn } : {}),
          ...(fixture.expect.lastQueuedMessage !== undefined ? { lastQueuedMessage: signals.lastQueuedMessage } : {}),
          ...(fixture.expect.replyExcerpt !== undefined ? { replyExcerpt: signals.replyExcerpt } : {}),
          ...(fixture.expect.promptKind !== undefined ? { promptKind: PromptKind[signals.prompt?.kind ?? 0] } : {}),
          ...(fixture.expect.prompt !== undefined ? { prompt: signals.prompt?.text } : {}),
          ...(fixture.expect.outputTokens !== undefined
            ? { outputTokens: Number(signals.usage?.totalOutputTokens ?? 0) }
            : {}),
        };
        expect(got, signals.detail).toEqual(fixture.expect);
      });
    });
  }
}
