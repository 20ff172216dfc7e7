import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type AuditEntry, AuditLog, MAX_AUDIT_BYTES, MAX_AUDIT_SUBJECT, redactSubject } from "./audit-log.js";

const temps: string[] = [];
afterEach(async () => {
  await Promise.all(temps.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

async function home(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "sa-audit-"));
  temps.push(dir);
  return dir;
}

const ENTRY: AuditEntry = {
  tokenKind: "user",
  from: "127.0.0.1",
  session: "fix-bug",
  fingerprint: "f".repeat(32),
  kind: "APPROVAL",
  question: "Do you want to proceed?",
  subject: "npm test",
  choiceId: "1",
  choiceLabel: "Yes",
  textBytes: 0,
  outcome: "the prompt went away",
};

describe("redactSubject", () => {
  it("hides what looks like a secret in a command and keeps the rest", () => {
    expect(redactSubject('curl -H "Authorization: Bearer abcdef0123456789" https://example.com')).toBe(
      'curl -H "Authorization: Bearer [redacted]" https://example.com',
    );
    expect(redactSubject("API_KEY=sk-live-1234 npm run deploy")).toBe("API_KEY=[redacted] npm run deploy");
    expect(redactSubject("git clone https://me:hunter2@example.com/r.git")).toBe(
      "git clone https://me:[redacted]@example.com/r.git",
    );
    expect(redactSubject(`echo ${"a1B2".repeat(10)}`)).toBe("echo [redacted]");
    expect(redactSubject("rm -rf build")).toBe("rm -rf build");
  });

  it("cuts a long subject and says so", () => {
    const cut = redactSubject(`echo ${"word ".repeat(400)}`);
    expect(cut.endsWith("… (cut)")).toBe(true);
    expect(cut.length).toBe(MAX_AUDIT_SUBJECT + "… (cut)".length);
  });
});

describe("AuditLog", () => {
  it("appends one JSON line per answer, with the time, private to the user", async () => {
    const dir = await home();
    const log = new AuditLog(dir);
    await Promise.all([log.append(ENTRY), log.append({ ...ENTRY, choiceId: "3" })]);
    const lines = (await readFile(log.path, "utf8")).trim().split("\n");
    expect(lines.map((l) => (JSON.parse(l) as AuditEntry).choiceId)).toEqual(["1", "3"]);
    expect(JSON.parse(lines[0] ?? "{}").time).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect((await stat(log.path)).mode & 0o777).toBe(0o600);
  });

  it("moves a full log aside to audit.jsonl.1 instead of growing past its bound", async () => {
    const dir = await home();
    const log = new AuditLog(dir);
    await writeFile(log.path, `${"x".repeat(MAX_AUDIT_BYTES - 10)}\n`);
    await log.append(ENTRY);
    expect((await stat(`${log.path}.1`)).size).toBe(MAX_AUDIT_BYTES - 9);
    expect((await readFile(log.path, "utf8")).split("\n").filter((l) => l !== "")).toHaveLength(1);
  });
});
