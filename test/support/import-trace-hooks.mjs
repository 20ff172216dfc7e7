// Module hooks for import-trace.mjs (they run on the loader thread): append each resolved URL to the file.
import { appendFileSync } from "node:fs";

/** @type {string} */
let file = "";

/** @param {{ file: string }} data */
export function initialize(data) {
  file = data.file;
}

/**
 * @param {string} specifier
 * @param {object} context
 * @param {(specifier: string, context: object) => Promise<{ url: string }>} next
 */
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  appendFileSync(file, `${result.url}\n`);
  return result;
}
