/** What splitting a command line produced: the argv, or a sentence saying what is wrong. */
export type ArgvResult = { readonly argv: string[] } | { readonly error: string };

/**
 * Splits a command line typed by a person into an argv, the way a shell splits words (spaces separate
 * words; single quotes keep everything literally; double quotes keep spaces; a backslash escapes the
 * next character) but without any expansion: no variables, globs, pipes or substitutions, because the
 * result is executed directly as an argument array, never by a shell.
 */
export function splitArgv(line: string): ArgvResult {
  const argv: string[] = [];
  let word = "";
  let inWord = false;
  let quote: "'" | '"' | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i] as string;
    if (quote === "'") {
      if (c === "'") quote = undefined;
      else word += c;
      continue;
    }
    if (quote === '"') {
      if (c === '"') quote = undefined;
      else if (c === "\\" && i + 1 < line.length && ['"', "\\"].includes(line[i + 1] as string)) word += line[++i];
      else word += c;
      continue;
    }
    if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
    } else if (c === "\\") {
      if (i + 1 >= line.length) return { error: "The command ends with a lone backslash." };
      word += line[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) argv.push(word);
      word = "";
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (quote) return { error: `A ${quote === "'" ? "single" : "double"} quote is not closed.` };
  if (inWord) argv.push(word);
  return { argv };
}
