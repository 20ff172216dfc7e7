import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Locator } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { StatusReason } from "../../gen/staragent/v1/session_pb.js";
import { waitFor } from "../support/wait.js";
import { OpenPages, PHONE } from "./support/browser.js";
import { type DashboardFixture, paneText, SETUP_TIMEOUT_MS, startDashboard } from "./support/dashboard-fixture.js";
import { waitForTerminal } from "./support/dashboard-page.js";

/** Whole-test budget: a stand-in turn, a browser page and an answer on a busy 2-core machine. */
const TEST_TIMEOUT_MS = 60_000;

/**
 * Whether a list row's prompt card lies inside the row (the row's height includes it), and whether a
 * press at the centre of its first button reaches that button (nothing of the next row drawn over it).
 */
function cardInsideRow(row: Locator): Promise<{ inside: boolean; hit: boolean }> {
  return row.evaluate((el) => {
    const box = el.getBoundingClientRect();
    const card = el.querySelector("sa-prompt-card")?.getBoundingClientRect();
    const button = el.querySelector("sa-prompt-card button");
    const b = button?.getBoundingClientRect();
    const at = b ? document.elementFromPoint(b.left + b.width / 2, b.top + b.height / 2) : null;
    return {
      inside: card !== undefined && card.top >= box.top - 1 && card.bottom <= box.bottom + 1,
      hit: button !== null && button !== undefined && at !== null && button.contains(at),
    };
  });
}

describe("answering an agent's prompt from the dashboard", () => {
  let f: DashboardFixture;
  const pages = new OpenPages();

  beforeAll(async () => {
    f = await startDashboard();
  }, SETUP_TIMEOUT_MS);

  afterEach(async () => {
    expect(await pages.closeAll()).toEqual([]);
  });

  afterAll(async () => {
    await f?.close();
  }, SETUP_TIMEOUT_MS);

  /** Starts `cli` as `id`, logging what its pane types into it, and brings it to its approval. */
  async function atApproval(id: string, cli: string): Promise<{ name: string; keys: () => Promise<string> }> {
    const keyLog = join(f.dir, `${id}.keys`);
    await writeFile(keyLog, "");
    const name = `nodes/local/sessions/${id}`;
    await f.sessions.createSession({
      parent: "nodes/local",
      sessionId: id,
      cwd: f.dir,
      command: ["env", `STANDIN_KEYLOG=${keyLog}`, cli],
    });
    await waitFor(
      async () => (await f.sessions.getSession({ name })).session?.statusReason === StatusReason.NO_TURN,
      "idle",
    );
    await f.sessions.sendChatMessage({ name, text: "please approve" });
    await waitFor(
      async () => ((await f.sessions.getSession({ name })).session?.pendingPrompt?.choices.length ?? 0) > 0,
      "the approval read",
      15_000,
    );
    return { name, keys: () => readFile(keyLog, "utf8") };
  }

  it(
    "approves a destructive command from the session list on the desktop only after a second, deliberate press",
    async () => {
      const s = await atApproval("desk", "claude");
      // A row below the waiting one (by name): the card must stay inside its own row, not under the next.
      const below = "nodes/local/sessions/desk-next";
      await f.sessions.createSession({
        parent: "nodes/local",
        sessionId: "desk-next",
        cwd: f.dir,
        command: ["sleep", "600"],
      });
      try {
        const { page } = await pages.add(f.browser);
        await f.login(page, "/");
        const row = page.locator('sa-session-list [data-key="nodes/local/sessions/desk"]');
        const card = row.locator("sa-prompt-card");
        await card.locator(".prompt-row").waitFor();
        await page.locator(`sa-session-list [data-key="${below}"]`).waitFor();
        expect(await card.locator(".prompt-subject").textContent()).toBe("rm -rf build");
        expect(await cardInsideRow(row)).toEqual({ inside: true, hit: true });
        // Tell-instead needs its text box: it is offered in the session view, not on the row.
        expect(await card.locator("button").allTextContents()).toEqual([
          "Yes",
          expect.stringMatching(/^Yes, and don't ask again/),
        ]);
        const before = await s.keys();
        const yes = card.locator('button[data-choice="1"]');
        await yes.click();
        await expect.poll(() => yes.textContent()).toBe("Confirm: Yes");
        // The first press typed nothing.
        expect(await s.keys()).toBe(before);
        await yes.click();
        await paneText(f.tmux, "desk", (t) => t.includes("removed build/"), "the approved command's output");
        expect((await s.keys()).slice(before.length)).toBe("1");
      } finally {
        await f.sessions.stopSession({ name: s.name, force: true });
        await f.sessions.stopSession({ name: below, force: true });
      }
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "approves a destructive command from the session list on a phone, only after the second press",
    async () => {
      const s = await atApproval("phone-yes", "claude");
      try {
        const { page } = await pages.add(f.browser, PHONE);
        await f.login(page, "/");
        const card = page.locator('sa-session-list [data-key="nodes/local/sessions/phone-yes"] sa-prompt-card');
        await card.locator(".prompt-row").waitFor();
        expect(await card.locator(".prompt-subject").textContent()).toBe("rm -rf build");
        const yes = card.locator('button[data-choice="1"]');
        const box = await yes.boundingBox();
        expect(box?.height ?? 0).toBeGreaterThanOrEqual(44);
        const before = await s.keys();
        // A click, not a synthesized tap (see the session-view test below).
        await yes.click();
        await expect.poll(() => yes.textContent()).toBe("Confirm: Yes");
        expect(await s.keys()).toBe(before);
        await yes.click();
        await paneText(f.tmux, "phone-yes", (t) => t.includes("removed build/"), "the approved command's output");
        expect((await s.keys()).slice(before.length)).toBe("1");
      } finally {
        await f.sessions.stopSession({ name: s.name, force: true });
      }
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "fits a long choice's label inside the prompt card on a phone (wrapped, never cut at the screen's edge)",
    async () => {
      const s = await atApproval("phone-wide", "claude");
      try {
        const { page } = await pages.add(f.browser, PHONE);
        await f.login(page, "/sessions/local/phone-wide");
        const card = page.locator("sa-session-view sa-prompt-card .prompt-card");
        // Claude Code's second choice names the folder: longer than a phone is wide.
        await card.locator('button[data-choice="2"]').waitFor();
        // The card leaves the phone's terminal a few rows of room. The terminal still asks for 24 rows
        // (it shows their bottom and scrolls), so the window the agent draws in keeps 23 (tmux's status
        // line takes one) and its dialog, and with it the card's choices, stays whole; squeezed to the
        // box, the dialog no longer fit and the card lost its choices.
        await waitForTerminal(page);
        const windowSize = async () =>
          (await f.tmux.run("display-message", "-p", "-t", "=phone-wide:", "#{window_width} #{window_height}"))
            .trim()
            .split(" ")
            .map(Number);
        await waitFor(async () => (await windowSize())[0] !== 80, "the window at the phone's width");
        expect((await windowSize())[1]).toBeGreaterThanOrEqual(23);
        const scroller = page.locator("sa-terminal .term-scroll");
        await expect
          .poll(() => scroller.evaluate((el) => el.scrollTop + el.clientHeight >= el.scrollHeight - 1))
          .toBe(true);
        await waitFor(
          async () => ((await f.sessions.getSession({ name: s.name })).session?.pendingPrompt?.choices.length ?? 0) > 0,
          "the prompt read at the phone's size",
        );
        await card.locator('button[data-choice="2"]').waitFor();
        const fit = await card.evaluate((el) => {
          const box = el.getBoundingClientRect();
          return [...el.querySelectorAll("button.prompt-choice")].map((b) => {
            const r = b.getBoundingClientRect();
            return {
              label: b.textContent,
              fits: r.left >= box.left - 1 && r.right <= box.right + 1 && b.scrollWidth <= b.clientWidth + 1,
            };
          });
        });
        expect(fit.find((c) => c.label?.includes("don't ask again"))).toBeDefined();
        expect(fit.filter((c) => !c.fits)).toEqual([]);
      } finally {
        await f.sessions.stopSession({ name: s.name, force: true });
      }
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "keeps a prompt's choices in sight on a phone, the text box for telling it instead after them",
    async () => {
      const s = await atApproval("phone-tell", "codex");
      try {
        const { page } = await pages.add(f.browser, PHONE);
        await f.login(page, "/sessions/local/phone-tell");
        const card = page.locator("sa-session-view sa-prompt-card .prompt-card");
        await card.locator(".prompt-text").waitFor();
        await waitForTerminal(page);
        await card.locator("button.prompt-choice").first().waitFor();
        const layout = await card.evaluate((el) => {
          const box = el.getBoundingClientRect();
          const choices = el.querySelector(".prompt-choices");
          const text = el.querySelector(".prompt-text-label");
          return {
            textAfterChoices:
              choices !== null &&
              text !== null &&
              (choices.compareDocumentPosition(text) & Node.DOCUMENT_POSITION_FOLLOWING) !== 0,
            hidden: [...el.querySelectorAll("button.prompt-choice")]
              .filter((b) => {
                const r = b.getBoundingClientRect();
                return r.top < box.top - 1 || r.bottom > box.bottom + 1 || r.bottom > window.innerHeight;
              })
              .map((b) => b.textContent),
          };
        });
        expect(layout).toEqual({ textAfterChoices: true, hidden: [] });
      } finally {
        await f.sessions.stopSession({ name: s.name, force: true });
      }
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "shows the prompt in full in the session view on a phone, and denies with one press of a touch-sized button",
    async () => {
      const s = await atApproval("phone", "opencode");
      try {
        const { page } = await pages.add(f.browser, PHONE);
        await f.login(page, "/sessions/local/phone");
        const card = page.locator("sa-session-view sa-prompt-card .prompt-card");
        await card.waitFor();
        // The terminal attached and fitted (its layout settled), as it is when a person looks.
        await waitForTerminal(page);
        // The phone, the sole viewer, takes the window's size and the CLI redraws its prompt narrower
        // (its labels cut at the new width): a new fingerprint. Tap once the card shows the prompt as
        // it is now, as a person would see it; an answer meant for the wider drawing is refused.
        await waitFor(async () => {
          const first = (await f.sessions.getSession({ name: s.name })).session;
          await new Promise((r) => setTimeout(r, 500));
          const second = (await f.sessions.getSession({ name: s.name })).session;
          const shown = await card.getAttribute("data-fingerprint");
          const settled =
            first?.pendingPrompt?.fingerprint === second?.pendingPrompt?.fingerprint &&
            first?.windowSize?.cols === second?.windowSize?.cols;
          return settled && shown === second?.pendingPrompt?.fingerprint;
        }, "the prompt redrawn at the phone's size and shown");
        expect(await card.locator(".prompt-command").textContent()).toBe("rm -rf build");
        expect(await card.locator(".prompt-danger").textContent()).toContain("it deletes files");
        const reject = card.locator('button[data-choice="3"]');
        await reject.waitFor();
        expect(await reject.textContent()).toBe("Reject");
        const box = await reject.boundingBox();
        expect(box?.height ?? 0).toBeGreaterThanOrEqual(44);
        // A click, not a synthesized tap: headless chromium dropped about one tap in ten here (the
        // button never saw it), which would test the emulator rather than the card.
        await reject.click();
        await waitFor(
          async () =>
            (await f.sessions.getSession({ name: s.name })).session?.statusReason === StatusReason.INTERRUPTED,
          "the turn interrupted",
          15_000,
        ).catch(async (err: unknown) => {
          // What the card said (sent, refused as changed, failed) and what the session is now.
          const now = (await f.sessions.getSession({ name: s.name })).session;
          const said = ((await card.textContent().catch(() => "(no card)")) ?? "").replace(/\s+/g, " ");
          throw new Error(
            `${err instanceof Error ? err.message : String(err)}; the card shows "${said}"; the session: reason ${now?.statusReason}, ${now?.statusDetail}, prompt ${now?.pendingPrompt?.fingerprint ?? "none"}, keys typed ${JSON.stringify(await s.keys())}`,
          );
        });
        expect(await s.keys()).toContain("\x1b");
        expect(await f.tmux.run("capture-pane", "-p", "-t", "=phone:")).not.toContain("removed build/");
      } finally {
        await f.sessions.stopSession({ name: s.name, force: true });
      }
    },
    TEST_TIMEOUT_MS,
  );
});
