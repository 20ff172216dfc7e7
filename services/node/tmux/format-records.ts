import { randomBytes } from "node:crypto";

/** Random bytes in each record marker: no value tmux prints can contain markers it cannot predict. */
const NONCE_BYTES = 8;

/**
 * A `-F` format whose output can be split back into its values whatever they contain. Paths, program
 * names and session names made by hand may hold line breaks and any control character (tmux prints
 * them as they are with `-u`), so neither lines nor a fixed separator can frame a record: each record
 * is framed by markers carrying a random nonce made for this one query.
 */
export interface RecordFormat {
  /** The format to pass to `-F` (or to `display-message -p`). */
  readonly format: string;
  /**
   * The records in `output`, each with exactly as many values as the format has fields; anything else
   * (a cut or foreign record) is skipped.
   */
  parse(output: string): string[][];
}

/** A RecordFormat over `fields`, each a tmux format expression such as `#{pane_id}`. */
export function recordFormat(fields: readonly string[]): RecordFormat {
  const nonce = randomBytes(NONCE_BYTES).toString("hex");
  const start = `\x1e${nonce}{`;
  const separator = `\x1f${nonce}|`;
  const end = `\x1e${nonce}}`;
  return {
    format: `${start}${fields.join(separator)}${end}`,
    parse(output: string): string[][] {
      const records: string[][] = [];
      let at = 0;
      for (;;) {
        const open = output.indexOf(start, at);
        if (open < 0) break;
        const close = output.indexOf(end, open + start.length);
        if (close < 0) break;
        let body = output.slice(open + start.length, close);
        // A start inside the body means a record before it was cut short: keep only the last one.
        const inner = body.lastIndexOf(start);
        if (inner >= 0) body = body.slice(inner + start.length);
        const values = body.split(separator);
        if (values.length === fields.length) records.push(values);
        at = close + end.length;
      }
      return records;
    },
  };
}
