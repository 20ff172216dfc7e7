import { appendFile, rename, stat } from "node:fs/promises";
import { join } from "node:path";

/** Largest audit log before it is rotated to `audit.jsonl.1` (the one before that is then replaced). */
export const MAX_AUDIT_BYTES = 1024 * 1024;
/** Longest subject (command, file, URL) kept in one entry; longer ones are cut and say so. */
export const MAX_AUDIT_SUBJECT = 500;

/** One answer as the audit log records it. */
export interface AuditEntry {
  /** Token kind of the caller: `user` (the Hub's token or a browser login) or `node` (a Hub's call). */
  readonly tokenKind: string;
  /** Where the call came from: its peer address, and for a call a Hub forwarded, the Hub's caller. */
  readonly from: string;
  readonly session: string;
  readonly fingerprint: string;
  readonly kind: string;
  readonly question: string;
  /** The command, file or URL asked about, redacted and bounded. */
  readonly subject: string;
  readonly choiceId: string;
  readonly choiceLabel: string;
  /** Bytes of text typed with a TELL_INSTEAD choice; the text itself is never written. */
  readonly textBytes: number;
  /** `answered`, `typed-unconfirmed`, or the refusal's code and reason. */
  readonly outcome: string;
}

/** Things that look like secrets in a command line: replaced before the command is written down. */
const SECRET_PATTERNS: readonly RegExp[] = [
  /\b(bearer|token|basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi,
  /\b([A-Za-z_]*(?:password|passwd|secret|token|api[_-]?key)[A-Za-z_]*)(=|:\s*)\S+/gi,
  /\b[A-Za-z0-9+/_-]{32,}={0,2}/g,
  /(:\/\/[^/\s:@]+:)[^@\s]+@/g,
];

/** `text` with secret-looking parts replaced by `[redacted]` and cut to MAX_AUDIT_SUBJECT characters. */
export function redactSubject(text: string): string {
  let out = text;
  out = out.replace(SECRET_PATTERNS[0] as RegExp, "$1 [redacted]");
  out = out.replace(SECRET_PATTERNS[1] as RegExp, "$1$2[redacted]");
  out = out.replace(SECRET_PATTERNS[2] as RegExp, "[redacted]");
  out = out.replace(SECRET_PATTERNS[3] as RegExp, "$1[redacted]@");
  return out.length > MAX_AUDIT_SUBJECT ? `${out.slice(0, MAX_AUDIT_SUBJECT)}… (cut)` : out;
}

/**
 * The owning machine's record of every AnswerPrompt call (`$STARAGENT_HOME/audit.jsonl`, one JSON
 * object a line, newest last): who answered, from where, which prompt, which choice, and how it went.
 * Bounded: past MAX_AUDIT_BYTES the file moves to `audit.jsonl.1` and a new one starts. Appends are
 * serialized, so concurrent answers never interleave their lines; a failed write is logged by the
 * caller and never fails the answer (the keys were typed already).
 */
export class AuditLog {
  readonly path: string;
  private tail: Promise<void> = Promise.resolve();

  constructor(home: string) {
    this.path = join(home, "audit.jsonl");
  }

  /** Appends one entry (with the time). */
  append(entry: AuditEntry): Promise<void> {
    const line = `${JSON.stringify({ time: new Date().toISOString(), ...entry })}\n`;
    const run = this.tail.then(() => this.write(line));
    this.tail = run.catch(() => undefined);
    return run;
  }

  private async write(line: string): Promise<void> {
    const size = await stat(this.path).then(
      (s) => s.size,
      () => 0,
    );
    if (size > 0 && size + Buffer.byteLength(line) > MAX_AUDIT_BYTES) await rename(this.path, `${this.path}.1`);
    await appendFile(this.path, line, { mode: 0o600 });
  }
}
