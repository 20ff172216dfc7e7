import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../services/common/log.js";
import { openStateFiles } from "../../services/node/store/state-files.js";
import { fuzz, mutateJson, mutateText } from "./fuzz.js";

/** The two state files as StarAgent writes them. */
const ADOPTED = {
  version: 1,
  sessions: [
    { tmuxSession: "work", sessionCreated: 1_700_000_000, adoptTime: "2026-01-01T00:00:00.000Z", cli: "claude" },
  ],
};
const SEEN = {
  version: 1,
  seen: [{ tmuxSession: "work", completionId: "turn-1", seenTime: "2026-01-01T00:00:00.000Z" }],
};

describe("fuzz: state files", () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "sa-fuzz-state-"));
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("any content reads as a valid value, and the file is kept as it was or moved aside whole", async () => {
    let n = 0;
    await fuzz(
      "state files",
      (r) => {
        const which = r.pick(["adopted", "seen"] as const);
        const base = which === "adopted" ? ADOPTED : SEEN;
        const content = r.chance(0.6)
          ? JSON.stringify(mutateJson(r, base))
          : r.chance(0.8)
            ? mutateText(r, JSON.stringify(base, null, 2))
            : r.bytes(500).toString("latin1");
        return { which, content };
      },
      async ({ which, content }) => {
        const home = join(root, String(n++));
        await mkdir(home);
        const files = openStateFiles(home, createLogger("fuzz", "error"));
        const name = which === "adopted" ? "adopted_sessions.json" : "seen.json";
        await writeFile(join(home, name), content);
        const value = which === "adopted" ? await files.adopted.read() : await files.seen.read();
        const entries = "sessions" in value ? value.sessions : value.seen;
        expect(Array.isArray(entries)).toBe(true);
        for (const entry of entries) {
          expect(typeof entry.tmuxSession).toBe("string");
          expect(Object.values(entry).every((v) => typeof v === "string" || typeof v === "number")).toBe(true);
        }
        // Nothing of the user's is lost: the content is where it was, or aside under another name.
        const kept = await Promise.all((await readdir(home)).map((f) => readFile(join(home, f), "latin1")));
        expect(kept).toContain(Buffer.from(content).toString("latin1"));
        await rm(home, { recursive: true, force: true });
      },
    );
  });
});
