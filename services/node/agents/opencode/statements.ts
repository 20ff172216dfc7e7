import type Database from "better-sqlite3";

/** Statements prepared per connection, by their SQL. */
const statements = new WeakMap<Database.Database, Map<string, Database.Statement>>();

/**
 * The statement for `sql` on `db`, prepared once per connection. Every look at an opencode session
 * runs the same few queries again; preparing them again each time (SQLite parses and plans the SQL)
 * cost more than running them. A closed connection's statements go with it (a WeakMap entry).
 */
export function prepared(db: Database.Database, sql: string): Database.Statement {
  let byText = statements.get(db);
  if (!byText) {
    byText = new Map();
    statements.set(db, byText);
  }
  let statement = byText.get(sql);
  if (!statement) {
    statement = db.prepare(sql);
    byText.set(sql, statement);
  }
  return statement;
}

/**
 * A message's `data` when it is JSON, else NULL: `json_extract` on text that is not JSON fails the whole
 * query ("malformed JSON"), so one damaged row would hide every figure of the session. A CASE, not a
 * `json_valid(data) AND …` condition: SQLite may evaluate a WHERE clause's terms in any order.
 */
export const JSON_DATA = "CASE WHEN json_valid(data) THEN data END";
