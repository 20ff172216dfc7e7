import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SessionStatus, StatusReason } from "../../gen/staragent/v1/session_pb.js";
import { createBuiltInAgents } from "../../services/node/agents/registry.js";
import { decideStatus } from "../../services/node/status/precedence.js";
import { loadFixtureSetup, type StatusFixtureCase } from "../support/agent-fixture-setup.js";
import { fixtureContext, fixtureScreen } from "../support/fixture-context.js";
import { FUZZ_RUNS, fuzz, mutateJsonl, mutateRows } from "./fuzz.js";

const AGENTS = join(import.meta.dirname, "../../services/node/agents");
/** When the fixtures' CLI process started: before every record in them (as in agent-fixtures.test.ts). */
const FIXTURE_PROCESS_START_MS = Date.UTC(2025, 0, 1);
/** What a module says when its reading of the native state threw (`observeSafely`). */
const READ_FAILED = /could not be read/;

/** One status fixture of a module, with the text of its native log (or opencode-style rows). */
interface LogCase {
  readonly dir: string;
  readonly fixture: StatusFixtureCase;
  /** The fixture's file (`log`, or `rows` for a CLI that keeps a database), and its text. */
  readonly file: string;
  readonly text: string;
}

/** Every status fixture of the module named `name` that places a native log or database rows. */
async function logCases(name: string): Promise<LogCase[]> {
  const root = join(AGENTS, name, "fixtures");
  const ranges = (await readdir(root, { withFileTypes: true }))
    .filter((e) => e.isDirectory() && !["chat", "chat-history", "usage"].includes(e.name))
    .map((e) => join(root, e.name));
  const out: LogCase[] = [];
  for (const dir of ranges) {
    const cases = JSON.parse(await readFile(join(dir, "cases.json"), "utf8")) as StatusFixtureCase[];
    for (const fixture of cases) {
      const file = fixture.log ?? fixture.rows;
      if (file) out.push({ dir, fixture, file, text: await readFile(join(dir, file), "utf8") });
    }
  }
  return out;
}

/**
 * Every module of the registry (so a new CLI is in it by its fixtures alone), observing its own status
 * fixtures with their native logs mutated (lines cut, doubled, dropped, values of other types, bytes
 * garbled): its readers never fail (a reading that throws shows as "could not be read"), and the
 * verdict is a status with a reason.
 */
describe("fuzz: every agent module's reading of mutated native logs", () => {
  let scratch: string;
  let count = 0;
  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), "sa-fuzz-modules-"));
  });
  afterAll(async () => {
    await rm(scratch, { recursive: true, force: true });
  });

  for (const module of createBuiltInAgents().modules) {
    it(`${module.name}: reads mutated logs without failing, and decides a status`, async () => {
      const setup = await loadFixtureSetup(AGENTS, module.name);
      const cases = setup ? await logCases(module.name) : [];
      // A module with no reader of a native log (the shell, screen-only CLIs) has nothing to fuzz here.
      if (!setup || cases.length === 0) {
        expect(module.history, `${module.name} reads a native log but has no status fixtures`).toBeUndefined();
        return;
      }
      await fuzz(
        `${module.name} module over mutated logs`,
        (r) => {
          const c = r.pick(cases);
          return { c, text: c.fixture.rows ? mutateRows(r, c.text) : mutateJsonl(r, c.text) };
        },
        async ({ c, text }) => {
          const run = join(scratch, String(count++));
          const fixtures = join(run, "fixtures");
          const home = join(run, "home");
          await mkdir(fixtures, { recursive: true });
          await mkdir(home);
          // The fixture's folder as it is, but its log mutated.
          for (const name of await readdir(c.dir)) {
            if (name !== c.file) await copyFile(join(c.dir, name), join(fixtures, name)).catch(() => undefined);
          }
          await writeFile(join(fixtures, c.file), text);
          const processStart = new Date(FIXTURE_PROCESS_START_MS);
          // Rows a database refuses (a mutated row of the wrong shape) are the setup's, not the module's.
          const placed = await setup.placeState(fixtures, home, c.fixture, processStart).then(
            () => true,
            () => false,
          );
          if (!placed) return;
          const context = fixtureContext({
            home,
            cwd: c.fixture.cwd ?? setup.cwd,
            setup,
            title: c.fixture.title ?? "",
            screen: await fixtureScreen(c.dir, c.fixture.screen),
            processStart,
          });
          const signals = await module.observe(context);
          expect(signals.detail ?? "").not.toMatch(READ_FAILED);
          const decided = decideStatus(signals, c.fixture.seen ?? "");
          expect(SessionStatus[decided.status]).toBeDefined();
          expect(StatusReason[decided.reason]).toBeDefined();
          await rm(run, { recursive: true, force: true });
        },
        Math.max(1, Math.floor(FUZZ_RUNS / 4)),
      );
    });
  }
});
