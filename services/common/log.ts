/**
 * Logging for both servers: one line per event on stderr, `time level scope message key=value...`.
 * Callers pass only what is safe to print: tokens, cookies and terminal input never reach a logger
 * (the auth and terminal code log outcomes, never the values).
 */
export type LogLevel = "debug" | "info" | "warn" | "error";

const LEVEL_ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** A scoped logger. `fields` values are printed with JSON quoting so a value can never forge a line. */
export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
  child(scope: string): Logger;
}

/** Where log lines go; tests pass an array-backed sink to read what was logged. */
export type LogSink = (line: string) => void;

/** Creates a logger that drops lines below `level`. */
export function createLogger(
  scope: string,
  level: LogLevel = "info",
  sink: LogSink = (line) => process.stderr.write(`${line}\n`),
): Logger {
  const min = LEVEL_ORDER[level];
  const write = (lvl: LogLevel, message: string, fields?: Record<string, unknown>) => {
    if (LEVEL_ORDER[lvl] < min) return;
    let line = `${new Date().toISOString()} ${lvl.toUpperCase().padEnd(5)} ${scope} ${message.replace(/[\r\n]+/g, " ")}`;
    for (const [key, value] of Object.entries(fields ?? {})) {
      if (value === undefined) continue;
      line += ` ${key}=${formatValue(value)}`;
    }
    sink(line);
  };
  return {
    debug: (m, f) => write("debug", m, f),
    info: (m, f) => write("info", m, f),
    warn: (m, f) => write("warn", m, f),
    error: (m, f) => write("error", m, f),
    child: (sub) => createLogger(`${scope}/${sub}`, level, sink),
  };
}

function formatValue(value: unknown): string {
  if (value instanceof Error) return JSON.stringify(value.message);
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (typeof value === "string" && /^[\w./:@%+-]+$/.test(value)) return value;
  return JSON.stringify(value) ?? "undefined";
}

/** Parses a level name (from `STARAGENT_LOG_LEVEL`), falling back to `info`. */
export function parseLogLevel(value: string | undefined): LogLevel {
  return value === "debug" || value === "info" || value === "warn" || value === "error" ? value : "info";
}
