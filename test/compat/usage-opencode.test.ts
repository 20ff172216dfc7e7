import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import Database from "better-sqlite3";
import { REPO_ROOT } from "../support/servers.js";
import { opencodeDriver } from "./opencode-driver.js";
import { defineUsageScenario, type NativeTotals } from "./usage-scenario.js";

/** opencode's database in the instance's HOME. */
const dbPath = (home: string) => join(home, ".local", "share", "opencode", "opencode.db");

/**
 * A `{table,row}` dump of the database's `session`, `message` and `part` rows (`data` parsed), the
 * form the opencode fixtures are loaded from (services/node/agents/opencode/fixtures/setup.ts).
 */
async function dumpRows(home: string, path: string): Promise<void> {
  const db = new Database(dbPath(home), { readonly: true });
  try {
    const lines: string[] = [];
    for (const table of ["session", "message", "part"]) {
      const columns =
        table === "session"
          ? "id, project_id, parent_id, slug, directory, title, version, time_created, time_updated"
          : table === "message"
            ? "id, session_id, time_created, time_updated, data"
            : "id, message_id, session_id, time_created, time_updated, data";
      for (const row of db.prepare(`SELECT ${columns} FROM ${table} ORDER BY time_created, id`).all() as Record<
        string,
        unknown
      >[]) {
        const data = typeof row.data === "string" ? { data: JSON.parse(row.data) as unknown } : {};
        lines.push(JSON.stringify({ table, row: { ...row, ...data } }));
      }
    }
    await writeFile(path, `${lines.join("\n")}\n`);
  } finally {
    db.close();
  }
}

/** The sums of the assistant messages opencode stored, and its newest one's prompt. */
function nativeTotals(home: string): NativeTotals {
  const db = new Database(dbPath(home), { readonly: true });
  try {
    type Tokens = { input?: number; output?: number; cache?: { read?: number; write?: number } };
    const messages = (db.prepare("SELECT data FROM message ORDER BY time_created, id").all() as { data: string }[])
      .map((r) => JSON.parse(r.data) as { role?: string; tokens?: Tokens })
      .filter((m) => m.role === "assistant" && m.tokens);
    const cache = (t: Tokens | undefined) => (t?.cache?.read ?? 0) + (t?.cache?.write ?? 0);
    const prompt = (t: Tokens | undefined) => (t?.input ?? 0) + cache(t);
    return {
      input: messages.reduce((n, m) => n + prompt(m.tokens), 0),
      cached: messages.reduce((n, m) => n + cache(m.tokens), 0),
      output: messages.reduce((n, m) => n + (m.tokens?.output ?? 0), 0),
      context: prompt(messages.at(-1)?.tokens),
    };
  } finally {
    db.close();
  }
}

/** The real opencode TUI: tokens (opencode prints no plan limit and records no rate limits). */
defineUsageScenario(opencodeDriver, {
  nativeTotals: async (prepared) => nativeTotals(prepared.home),
  record: (prepared, path) => dumpRows(prepared.home, path),
  compact: { command: "/compact", done: (text) => /Summary of the usage compat/.test(text) },
  fixtures: join(REPO_ROOT, "services/node/agents/opencode/fixtures/usage", opencodeDriver.version),
});
