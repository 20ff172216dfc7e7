import type { TestTmux } from "../support/tmux.js";
import { waitFor } from "../support/wait.js";

/** The visible screen of a pane as plain text (no escapes), joined wrapped lines. */
export function captureScreen(tmux: TestTmux, target: string): Promise<string> {
  return tmux.run("capture-pane", "-p", "-J", "-t", target);
}

/** The pane's title, process id and current command, for diagnostics and process checks. */
export async function paneInfo(
  tmux: TestTmux,
  target: string,
): Promise<{ title: string; pid: number; command: string }> {
  const out = await tmux.run(
    "display-message",
    "-p",
    "-t",
    target,
    "#{pane_title}\x1f#{pane_pid}\x1f#{pane_current_command}",
  );
  const [title = "", pid = "0", command = ""] = out.replace(/\n$/, "").split("\x1f");
  return { title, pid: Number(pid), command };
}

/** A readable dump of the pane (title and screen) for failure messages. */
export async function describePane(tmux: TestTmux, target: string): Promise<string> {
  try {
    const { title, command } = await paneInfo(tmux, target);
    const screen = (await captureScreen(tmux, target))
      .split("\n")
      .filter((line) => line.trim() !== "")
      .join("\n");
    return `pane title ${JSON.stringify(title)}, command ${command}, screen:\n${screen}`;
  } catch (err) {
    return `pane unreadable: ${(err as Error).message}`;
  }
}

/** Waits until the pane's screen satisfies `accept`; the timeout error shows the last screen. */
export async function waitForScreen(
  tmux: TestTmux,
  target: string,
  accept: (screen: string) => boolean,
  what: string,
  timeoutMs: number,
): Promise<string> {
  try {
    return await waitFor(
      async () => {
        const screen = await captureScreen(tmux, target);
        return accept(screen) ? screen : undefined;
      },
      what,
      timeoutMs,
      100,
    );
  } catch (err) {
    throw new Error(`${(err as Error).message}\n${await describePane(tmux, target)}`);
  }
}

/**
 * Types `text` into the pane like a person at the keyboard, waits until the CLI shows it in its
 * input box (keys sent before the echo can be taken as part of a paste), then presses Enter, at least
 * `submitQuietMs` after the echo (a CLI may take a quick Enter as a line break).
 */
export async function typePrompt(
  tmux: TestTmux,
  target: string,
  text: string,
  timeoutMs: number,
  submitQuietMs = 0,
): Promise<void> {
  await tmux.run("send-keys", "-t", target, "-l", text);
  await waitForScreen(
    tmux,
    target,
    (screen) => screen.includes(text),
    `the typed prompt ${JSON.stringify(text)} on screen`,
    timeoutMs,
  );
  // The CLI's own timer, which no screen shows (CliDriver.submitQuietMs), counted from the echo.
  if (submitQuietMs > 0) await new Promise((r) => setTimeout(r, submitQuietMs));
  await tmux.run("send-keys", "-t", target, "Enter");
}

/**
 * Claude Code and opencode ignore keys on a permission or question dialog for a moment after drawing
 * it (so a key meant for the input box cannot answer it): Claude Code ignored Enter at once and took it
 * 0.5 s later; opencode once left its dialog open after an Enter sent as it appeared. There is no event
 * for the end of that guard, so a person's pace is kept: this long after the dialog shows.
 */
const DIALOG_INPUT_GUARD_MS = 1_000;
/** How long a dialog may take to show once StarAgent reported it. */
const DIALOG_TIMEOUT_MS = 10_000;

/** Waits until the dialog showing `marker` takes keys, then sends `key`. */
export async function answerDialog(tmux: TestTmux, target: string, marker: string, key: string): Promise<void> {
  await waitForScreen(
    tmux,
    target,
    (s) => s.includes(marker),
    `the dialog ${JSON.stringify(marker)}`,
    DIALOG_TIMEOUT_MS,
  );
  await new Promise((r) => setTimeout(r, DIALOG_INPUT_GUARD_MS));
  await tmux.run("send-keys", "-t", target, key);
}
