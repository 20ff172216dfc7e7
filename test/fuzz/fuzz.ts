import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** Cases per target in `make test`: a few seconds for every target together. */
const DEFAULT_RUNS = 120;
/** The seed `make test` uses, so its cases are the same on every run and every machine. */
const DEFAULT_SEED = 20_261_130;
/**
 * Longest one case may take before its parser counts as hanging (catastrophic backtracking, a loop).
 * Generous: parsers take well under a millisecond per case; a loaded machine must never trip it.
 */
const CASE_DEADLINE_MS = 2_000;
/** Characters of a failing input shown in the failure (the seed and case number replay it whole). */
const PREVIEW_CHARS = 600;

/** `STARAGENT_FUZZ_SEED` (make fuzz picks a new one, prints it, and takes FUZZ_SEED to replay), else the fixed seed. */
export const FUZZ_SEED = Number(process.env.STARAGENT_FUZZ_SEED ?? DEFAULT_SEED);
/** `STARAGENT_FUZZ_RUNS` (make fuzz asks for many), else the few of `make test`. */
export const FUZZ_RUNS = Number(process.env.STARAGENT_FUZZ_RUNS ?? DEFAULT_RUNS);

/** A small seeded generator (mulberry32): the same seed gives the same cases everywhere. */
export class Random {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** A number in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    const item = items[this.int(items.length)];
    if (item === undefined) throw new Error("pick from an empty list");
    return item;
  }

  /** A length that is usually small and now and then large. */
  length(max: number): number {
    return this.chance(0.9) ? this.int(Math.min(max, 40) + 1) : this.int(max + 1);
  }

  /** Random bytes. */
  bytes(max: number): Buffer {
    const out = Buffer.alloc(this.length(max));
    for (let i = 0; i < out.length; i++) out[i] = this.int(256);
    return out;
  }

  /** A random string mixing ASCII, controls, line breaks, box drawing, emoji and lone surrogates. */
  text(max: number): string {
    let s = "";
    const n = this.length(max);
    for (let i = 0; i < n; i++) s += this.pick(ALPHABETS)(this);
    return s;
  }
}

const ALPHABETS: ReadonlyArray<(r: Random) => string> = [
  (r) => String.fromCharCode(32 + r.int(95)),
  (r) => String.fromCharCode(32 + r.int(95)),
  (r) => String.fromCharCode(32 + r.int(95)),
  (r) => String.fromCharCode(r.int(32)),
  (r) => r.pick(["\n", "\r\n", "\t", "\x7f", "\x1b[31m", "\x1b[0m", "\x1f", "\x1e", "\u2028", "\ufeff"]),
  (r) => r.pick(["─", "│", "╭", "╮", "╰", "╯", "❯", "›", "•", "◦", "⏺", "✻", "⎿", "▣", "△", "┃", "█", "░"]),
  (r) => r.pick(["é", "ü", "日", "本", "🚀", "👩‍💻", "\u0301", "\ud800", "\udfff", "\u200b"]),
  (r) => String.fromCodePoint(r.int(0x2ffff)),
];

/** Strings that break naive parsers: JSON fragments, numbers at the edges, escapes, formats. */
const NASTY: readonly string[] = [
  "",
  "null",
  "{}",
  "[]",
  '{"',
  '"}',
  "]}",
  "1e309",
  "-0",
  "9007199254740993",
  "NaN",
  "\\u0000",
  "\\ud800",
  '"\\',
  "#{session_name}",
  "#(touch x)",
  ";",
  "\u0000",
  "\x1b]0;title\x07",
  "\x1b[2J",
  "x".repeat(10_000),
  "\n".repeat(200),
  "(".repeat(500),
  `${"a".repeat(200)}!`,
  " ".repeat(300),
  "__proto__",
  "constructor",
  '{"__proto__":{"polluted":1}}',
  "\r",
];

/** Applies one to five random edits to `text`: cuts, copies, insertions, swaps, repeats. */
export function mutateText(r: Random, text: string): string {
  let s = text;
  const edits = 1 + r.int(5);
  for (let e = 0; e < edits; e++) {
    const at = r.int(s.length + 1);
    const to = Math.min(s.length, at + r.length(200));
    switch (r.int(9)) {
      case 0:
        s = s.slice(0, at) + s.slice(to);
        break;
      case 1:
        s = s.slice(0, r.int(s.length + 1)) + s.slice(at, to) + s.slice(r.int(s.length + 1));
        break;
      case 2:
        s = s.slice(0, at) + r.pick(NASTY) + s.slice(at);
        break;
      case 3:
        s = s.slice(0, at) + r.text(50) + s.slice(at);
        break;
      case 4:
        s = s.slice(0, at);
        break;
      case 5: {
        const lines = s.split("\n");
        const a = r.int(lines.length);
        const b = r.int(lines.length);
        [lines[a], lines[b]] = [lines[b] ?? "", lines[a] ?? ""];
        s = lines.join("\n");
        break;
      }
      case 6: {
        const lines = s.split("\n");
        const line = lines[r.int(lines.length)] ?? "";
        lines.splice(r.int(lines.length + 1), 0, ...Array.from({ length: 1 + r.length(300) }, () => line));
        s = lines.join("\n");
        break;
      }
      case 7:
        s = s.slice(0, at) + String.fromCharCode(r.int(0x3000)) + s.slice(at + 1);
        break;
      default:
        s = s.replace(/\d+/, () => r.pick(["0", "-1", "1e309", "99999999999999999999", "NaN", "0.5"]));
    }
  }
  return s;
}

/** Changes one to three values somewhere inside a JSON value to values of other types, or removes them. */
export function mutateJson(r: Random, value: unknown): unknown {
  const copy: unknown = JSON.parse(JSON.stringify(value ?? null));
  const edits = 1 + r.int(3);
  let root = copy;
  for (let e = 0; e < edits; e++) {
    const containers: Array<Record<string, unknown> | unknown[]> = [];
    collect(root, containers);
    if (containers.length === 0 || r.chance(0.05)) {
      root = randomJson(r, 2);
      continue;
    }
    const target = r.pick(containers);
    const keys = Array.isArray(target) ? target.map((_, i) => String(i)) : Object.keys(target);
    const key = keys.length > 0 && r.chance(0.8) ? r.pick(keys) : r.pick(["type", "message", "payload", "x", "0"]);
    if (r.chance(0.2)) {
      if (Array.isArray(target)) target.splice(Number(key), 1);
      else delete target[key];
    } else if (Array.isArray(target)) {
      target[Number(key) || 0] = randomJson(r, 2);
    } else {
      target[key] = randomJson(r, 2);
    }
  }
  return root;
}

function collect(value: unknown, out: Array<Record<string, unknown> | unknown[]>): void {
  if (value === null || typeof value !== "object") return;
  out.push(value as Record<string, unknown> | unknown[]);
  for (const child of Object.values(value)) collect(child, out);
}

/** A random JSON value of any type, nested at most `depth` deep. */
export function randomJson(r: Random, depth: number): unknown {
  switch (r.int(depth > 0 ? 8 : 6)) {
    case 0:
      return null;
    case 1:
      return r.chance(0.5);
    case 2:
      return r.pick([0, -1, 1.5, 2 ** 53 + 2, -(2 ** 31), 1e308, Number.MIN_VALUE]);
    case 3:
      return r.text(30);
    case 4:
      return r.pick(NASTY);
    case 5:
      return r.pick(["user", "assistant", "system", "event_msg", "response_item", "task_complete", "tool_use", "text"]);
    case 6:
      return Array.from({ length: r.int(4) }, () => randomJson(r, depth - 1));
    default: {
      const obj: Record<string, unknown> = {};
      for (let i = r.int(4); i > 0; i--)
        obj[r.pick(["type", "message", "content", "payload", r.text(8)])] = randomJson(r, depth - 1);
      return obj;
    }
  }
}

/** Mutates a JSONL text: some lines structurally (as JSON), the whole text as text now and then. */
export function mutateJsonl(r: Random, text: string): string {
  const lines = text.split("\n");
  for (let e = 1 + r.int(4); e > 0; e--) {
    const i = r.int(lines.length);
    const line = lines[i] ?? "";
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      parsed = undefined;
    }
    lines[i] = parsed !== undefined && r.chance(0.8) ? JSON.stringify(mutateJson(r, parsed)) : mutateText(r, line);
  }
  const joined = lines.join("\n");
  return r.chance(0.2) ? mutateText(r, joined) : joined;
}

/**
 * Database rows (`{table, row}` lines, a CLI that keeps a database): the JSON each row's `data` holds
 * mutated, one row or more, the rows themselves left loadable.
 */
export function mutateRows(r: Random, text: string): string {
  const rows = text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as { table: string; row: Record<string, unknown> });
  const withData = rows.filter((x) => typeof x.row.data === "object" && x.row.data !== null);
  for (let e = 1 + r.int(3); e > 0 && withData.length > 0; e--) {
    const target = r.pick(withData);
    target.row.data = mutateJson(r, target.row.data);
  }
  return rows.map((x) => JSON.stringify(x)).join("\n");
}

/** The files of a fixtures folder tree whose names end with `suffix`, as [path, content]. */
export function fixtureFiles(dirs: readonly string[], suffix: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(suffix)) out.push([path, readFileSync(path, "utf8")]);
    }
  };
  for (const dir of dirs) walk(dir);
  if (out.length === 0) throw new Error(`no *${suffix} fixtures in ${dirs.join(", ")}`);
  return out;
}

/** A per-target seed, so each target's cases do not depend on how many cases other targets ran. */
function targetSeed(target: string): number {
  let h = FUZZ_SEED >>> 0;
  for (const c of target) h = Math.imul(h ^ c.charCodeAt(0), 0x01000193) >>> 0;
  return h;
}

/**
 * Runs FUZZ_RUNS cases of one target: `generate` makes an input from the target's generator, `check`
 * feeds it to the code under test and asserts what must hold (at least: nothing thrown). A failure or
 * a case slower than CASE_DEADLINE_MS fails with the seed, target and case number that replay it
 * (`make fuzz FUZZ_SEED=<seed>`) and a preview of the input.
 */
export async function fuzz<T>(
  target: string,
  generate: (r: Random) => T,
  check: (input: T) => unknown,
  runs = FUZZ_RUNS,
): Promise<void> {
  const r = new Random(targetSeed(target));
  for (let i = 0; i < runs; i++) {
    const input = generate(r);
    const started = performance.now();
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        Promise.resolve().then(() => check(input)),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${CASE_DEADLINE_MS} ms`)), CASE_DEADLINE_MS);
        }),
      ]);
      const took = performance.now() - started;
      // A synchronous parser cannot be interrupted: a slow one is caught once it returns.
      if (took > CASE_DEADLINE_MS) throw new Error(`took ${Math.round(took)} ms (limit ${CASE_DEADLINE_MS} ms)`);
    } catch (err) {
      const reason = err instanceof Error ? (err.stack ?? err.message) : String(err);
      throw new Error(
        `fuzz target "${target}", case ${i} of seed ${FUZZ_SEED} failed (replay: make fuzz FUZZ_SEED=${FUZZ_SEED} FUZZ_RUNS=${runs}): ${reason}\ninput: ${preview(input)}`,
      );
    } finally {
      clearTimeout(timer);
    }
  }
}

function preview(input: unknown): string {
  const text =
    typeof input === "string"
      ? JSON.stringify(input)
      : JSON.stringify(input, (_k, v) => (Buffer.isBuffer(v) ? `<${v.length} bytes>` : v));
  return text === undefined ? String(input) : text.length > PREVIEW_CHARS ? `${text.slice(0, PREVIEW_CHARS)}…` : text;
}
