/**
 * Polls `check` until it returns a value other than undefined/false, or fails after `timeoutMs`. `what`
 * names the awaited condition in the failure; a function is asked at the end, so it can say what was
 * seen last.
 */
export async function waitFor<T>(
  check: () => T | undefined | false | Promise<T | undefined | false>,
  what: string | (() => string),
  timeoutMs = 10_000,
  intervalMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      const suffix = lastError instanceof Error ? ` (last error: ${lastError.message})` : "";
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${typeof what === "string" ? what : what()}${suffix}`,
      );
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
