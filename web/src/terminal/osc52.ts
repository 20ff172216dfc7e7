/** Largest clipboard text accepted from a program (base64 characters), so a runaway program cannot flood. */
const MAX_OSC52_BASE64 = 1_400_000;

/**
 * The text an OSC 52 sequence asks to copy, or undefined when there is nothing to copy. `data` is what
 * follows `52;`: `<targets>;<base64>`. The targets may be empty (tmux sends none), a payload of `?` is a
 * request to read the clipboard (never answered: nothing reads the clipboard without a person's paste),
 * and an empty or malformed payload is ignored.
 */
export function osc52Text(data: string): string | undefined {
  const semicolon = data.indexOf(";");
  if (semicolon < 0) return undefined;
  const payload = data.slice(semicolon + 1).trim();
  if (payload === "" || payload === "?" || payload.length > MAX_OSC52_BASE64) return undefined;
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(payload)) return undefined;
  let binary: string;
  try {
    binary = atob(payload);
  } catch {
    return undefined;
  }
  const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
  const text = new TextDecoder("utf-8", { fatal: false }).decode(bytes);
  return text === "" ? undefined : text;
}
