import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { Code } from "@connectrpc/connect";
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { SessionStatus, StatusReason } from "../../gen/staragent/v1/session_pb.js";
import { expectCode } from "../support/codes.js";
import { waitFor } from "../support/wait.js";
import { DESKTOP, OpenPages, PHONE } from "./support/browser.js";
import {
  type DashboardFixture,
  paneText,
  SETUP_TIMEOUT_MS,
  startDashboard,
  tmuxSession,
} from "./support/dashboard-fixture.js";
import { terminalSize, terminalText, waitForTerminal, withTypingReport } from "./support/dashboard-page.js";

/** A bash with a fixed prompt and no user files, so the screen is predictable. */
const BASH = ["env", "PS1=ready$ ", "bash", "--norc", "--noprofile"];
/** An Escape key in a key log: ESC not starting a sequence (a bracketed paste's `ESC [200~`). */
const LONE_ESCAPE = new RegExp(`${String.fromCharCode(0x1b)}(?!\\[)`, "g");
/** The Claude Code stand-in with quick turns (test/stand-ins/README.md). */
const QUICK_CLAUDE = ["env", "STANDIN_THINK_MS=10", "STANDIN_TURN_MS=200", "claude"];
/** Whole-test budget: two browsers on one session, a size taken over, the redraw. */
const TEST_TIMEOUT_MS = 60_000;

/**
 * A full-screen program like the agents' TUIs: on the alternate screen it fills every row to the
 * last column, and on each SIGWINCH clears and draws itself again at the new size, an input box
 * at the bottom.
 */
const FULL_SCREEN = [
  "bash",
  "-c",
  [
    "draw() { read -r rows cols < <(stty size); printf '\\033[H\\033[2J';",
    "for ((i = 1; i <= rows - 3; i++)); do printf 'row %-3d%s|\\n' $i \"$(printf '%*s' $((cols - 8)) '' | tr ' ' '.')\"; done;",
    "printf '%s\\n' \"$(printf '%*s' $cols '' | tr ' ' '-')\"; printf '> input box %sx%s' $cols $rows; };",
    "printf '\\033[?1049h'; trap draw WINCH; draw; while :; do sleep 60 & wait $!; done",
  ].join(" "),
];

describe("daily work in the dashboard", () => {
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

  // Lines wider than a phone from a program that never redraws (only tmux's redraw can put them right),
  // and an agent's TUI, which redraws itself at each size (a redraw at the new size written into the
  // viewer at the old one garbled it: rules and the status line cut and shifted).
  const TAKEN_BACK = [
    [
      "a program that never redraws",
      "taken-back",
      ["bash", "-c", "for i in $(seq 1 12); do printf 'line %02d %s|\\n' $i $(printf '%070d' 0); done; sleep 3600"],
    ],
    ["an agent's TUI (the Claude Code stand-in)", "taken-back-tui", QUICK_CLAUDE],
  ] as const;
  for (const [what, id, command] of TAKEN_BACK)
    it(
      `draws the terminal whole again for the viewer that takes the size back (desktop), and for the one it was taken from (phone): ${what}`,
      async () => {
        const name = `nodes/local/sessions/${id}`;
        await f.sessions.createSession({ parent: "nodes/local", sessionId: id, cwd: f.dir, command: [...command] });
        let held: Page | undefined;
        try {
          const desktop = await pages.add(f.browser, DESKTOP);
          await f.login(desktop.page, `/sessions/local/${id}`);
          await waitForTerminal(desktop.page);
          const wide = await terminalSize(desktop.page);
          const phone = await pages.add(f.browser, PHONE);
          await f.login(phone.page, `/sessions/local/${id}`);
          await waitForTerminal(phone.page);
          await phone.page.locator("sa-terminal button", { hasText: "Take over size" }).click();
          await waitFor(async () => (await terminalSize(desktop.page)).cols < wide.cols, "the phone's size taken");
          // The answer to the desktop's take-over comes late, as over a slow link: tmux's drawing at the
          // new size reaches the desktop's stream first.
          await desktop.page.route("**/staragent.v1.TerminalStream/ResizeTerminal", async (route) => {
            const response = await route.fetch();
            await new Promise((r) => setTimeout(r, 700));
            await route.fulfill({ response });
          });
          held = desktop.page;
          await desktop.page.locator("sa-terminal button", { hasText: "Take over size" }).click();
          await waitFor(async () => (await terminalSize(desktop.page)).cols === wide.cols, "the desktop's size back");
          for (const [viewer, page] of [
            ["desktop", desktop.page],
            ["phone", phone.page],
          ] as const) {
            let shown = "";
            let pane = "";
            await waitFor(
              async () => {
                pane = (await f.tmux.run("capture-pane", "-p", "-t", `=${id}:`)).trimEnd();
                const rows = pane.split("\n").length;
                shown = (await terminalText(page))
                  .split("\n")
                  .slice(-(await terminalSize(page)).rows)
                  .slice(0, rows)
                  .map((l) => l.trimEnd())
                  .join("\n")
                  .trimEnd();
                return shown === pane;
              },
              () => `the ${viewer}'s screen to be tmux's:\n${shown}\n--- tmux:\n${pane}`,
            );
          }
        } finally {
          // A resize still held when the test ends has nowhere to go once the page closes.
          await held?.unrouteAll({ behavior: "ignoreErrors" });
          await f.sessions.stopSession({ name }).catch(() => undefined);
        }
      },
      TEST_TIMEOUT_MS,
    );

  it(
    "draws the desktop's terminal whole again after a phone took over the size",
    async () => {
      const id = "taken-over";
      const name = `nodes/local/sessions/${id}`;
      await f.sessions.createSession({ parent: "nodes/local", sessionId: id, cwd: f.dir, command: FULL_SCREEN });
      try {
        const desktop = await pages.add(f.browser, DESKTOP);
        await f.login(desktop.page, `/sessions/local/${id}`);
        await waitForTerminal(desktop.page);
        // The desktop's size as the program drew it: read with the drawing, since the terminal may fit
        // again once the page has settled (a font or a toolbar laid out late).
        let sizes = "";
        const wide = await waitFor(
          async () => {
            const s = await terminalSize(desktop.page);
            const box = (await paneScreen()).find((l) => l.startsWith("> input box"))?.trimEnd() ?? "(none)";
            sizes = `terminal ${s.cols}x${s.rows}, pane's ${box}`;
            return box === `> input box ${s.cols}x${s.rows - 1}` ? s : undefined;
          },
          () => `the program at the desktop's size (${sizes})`,
        );

        const phone = await pages.add(f.browser, PHONE);
        await f.login(phone.page, `/sessions/local/${id}`);
        await waitForTerminal(phone.page);
        await phone.page.locator("sa-terminal button", { hasText: "Take over size" }).click();
        const narrow = await waitFor(async () => {
          const s = await terminalSize(desktop.page);
          return s.cols < wide.cols ? s : undefined;
        }, "the desktop's terminal to take the phone's size");
        await waitFor(
          async () => (await paneScreen()).includes(`> input box ${narrow.cols}x${narrow.rows - 1}`),
          "the program redrawn",
        );
        // The desktop shows exactly what tmux has: no line of the wide drawing left or reflowed.
        let shown: string[] = [];
        let pane: string[] = [];
        await waitFor(
          async () => {
            pane = await paneScreen();
            shown = (await terminalText(desktop.page)).split("\n").slice(-narrow.rows).slice(0, pane.length);
            return shown.map((l) => l.trimEnd()).join("\n") === pane.join("\n");
          },
          () => `the desktop's screen to be tmux's:\n${shown.join("\n")}\n--- tmux:\n${pane.join("\n")}`,
        );
      } finally {
        await f.sessions.stopSession({ name }).catch(() => undefined);
      }

      async function paneScreen(): Promise<string[]> {
        const text = await f.tmux.run("capture-pane", "-p", "-t", `=${id}:`);
        return text
          .replace(/\n$/, "")
          .split("\n")
          .map((l) => l.trimEnd());
      }
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "puts the focus in the new session's terminal once the create dialog is submitted with Enter",
    async () => {
      const id = "entered";
      const v = await pages.add(f.browser, DESKTOP);
      await f.login(v.page);
      await v.page.getByRole("button", { name: "New session" }).first().click();
      const dialog = v.page.locator("sa-create-dialog dialog");
      await dialog.waitFor();
      await dialog.getByLabel("Folder").fill(f.dir);
      await dialog.getByLabel("A shell").check();
      await dialog.getByLabel("Name").fill(id);
      await dialog.getByLabel("Name").press("Enter");
      try {
        await v.page.waitForURL((u) => u.pathname === `/sessions/local/${id}`);
        await waitForTerminal(v.page);
        await waitFor(
          () => v.page.evaluate(() => document.activeElement?.closest("sa-terminal") !== null),
          "the focus in the terminal",
        );
        await v.page.keyboard.type("echo entered-$((6*7))");
        await v.page.keyboard.press("Enter");
        await withTypingReport(v.page, () =>
          paneText(f.tmux, id, (t) => t.includes("\nentered-42"), "the typed command run in the session"),
        );
      } finally {
        await f.sessions.stopSession({ name: `nodes/local/sessions/${id}` }).catch(() => undefined);
      }
    },
    TEST_TIMEOUT_MS,
  );

  for (const [device, options] of [
    ["desktop", DESKTOP],
    ["phone", PHONE],
  ] as const) {
    it(
      `puts the focus in the terminal after a reload, so typing reaches the session (${device})`,
      async () => {
        const id = `reloaded-${device}`;
        const name = `nodes/local/sessions/${id}`;
        await f.sessions.createSession({ parent: "nodes/local", sessionId: id, cwd: f.dir, command: BASH });
        try {
          const v = await pages.add(f.browser, options);
          await f.login(v.page, `/sessions/local/${id}`);
          await waitForTerminal(v.page);
          await v.page.reload();
          await waitForTerminal(v.page);
          await waitFor(
            () => v.page.evaluate(() => document.activeElement?.closest("sa-terminal") !== null),
            "the focus in the terminal",
          );
          await v.page.keyboard.type("echo reloaded-$((40+2))");
          await v.page.keyboard.press("Enter");
          await withTypingReport(v.page, () =>
            paneText(f.tmux, id, (t) => t.includes("\nreloaded-42"), "the typed command run in the session"),
          );
          expect(await v.page.locator("sa-create-dialog dialog[open]").count()).toBe(0);
        } finally {
          await f.sessions.stopSession({ name }).catch(() => undefined);
        }
      },
      TEST_TIMEOUT_MS,
    );

    it(
      `renders an answer's Markdown in chat: highlighted code, list, table, links, nothing that runs (${device})`,
      async () => {
        const id = `markdown-${device}`;
        const name = `nodes/local/sessions/${id}`;
        await f.sessions.createSession({ parent: "nodes/local", sessionId: id, cwd: f.dir, command: QUICK_CLAUDE });
        try {
          await f.sessions.sendChatMessage({ name, text: "answer in markdown" });
          const v = await pages.add(f.browser, options);
          await f.login(v.page, `/sessions/local/${id}/chat`);
          const answer = v.page.locator("sa-chat-view .msg-assistant", { hasText: "Markdown reply" });
          const code = answer.locator(".msg-markdown pre code");
          await code.waitFor({ timeout: 15_000 });
          expect(await answer.count()).toBe(1);
          expect(await code.textContent()).toBe(
            "export function add(a: number, b: number): number {\n  return a + b;\n}",
          );
          expect(await code.locator(".hljs-keyword").first().textContent()).toBe("export");
          expect(await answer.locator("strong").textContent()).toBe("the helper");
          expect(await answer.locator("li").allTextContents()).toEqual([
            "first point",
            "second point with inline code",
          ]);
          expect(await answer.locator("td").allTextContents()).toEqual(["1, 2", "3"]);
          // Blocks follow each other as in a document: the line breaks between the rendered elements are
          // not drawn as blank lines (the gap between two list items is well under a line's height).
          const gap = await answer.locator("li").evaluateAll((items) => {
            const [a, b] = items.map((i) => i.getBoundingClientRect());
            return a && b ? { gap: b.top - a.bottom, line: a.height } : undefined;
          });
          expect(gap?.gap).toBeLessThan((gap?.line ?? 0) / 2);
          const docs = answer.locator("a", { hasText: "the docs" });
          expect(await docs.getAttribute("href")).toBe("https://example.com/docs");
          expect(await docs.getAttribute("target")).toBe("_blank");
          expect(await docs.getAttribute("rel")).toBe("noopener noreferrer");
          // The sanitizer: no script, no handler, no javascript: link; nothing ran.
          expect(await answer.locator("script, [onerror]").count()).toBe(0);
          expect(await answer.locator('a[href^="javascript"]').count()).toBe(0);
          expect(await v.page.evaluate(() => (window as { __saInjected?: boolean }).__saInjected)).toBeUndefined();
          // Code and table scroll inside their box: the page itself never scrolls sideways.
          expect(
            await v.page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth),
          ).toBe(true);
          const fits = await answer.evaluate((el) => {
            const box = el.getBoundingClientRect();
            return [...el.querySelectorAll("pre, table")].every(
              (b) => b.getBoundingClientRect().right <= box.right + 1,
            );
          });
          expect(fits).toBe(true);
          // Chrome reports the handler to the CSP when DOMPurify parses the answer (an inert document:
          // nothing runs there); the page's CSP refusing inline handlers is the second guard. Only that.
          const reported = v.errors.splice(0);
          expect(reported.every((e) => e.includes("inline event handler") && e.includes("script-src 'self'"))).toBe(
            true,
          );
        } finally {
          await f.sessions.stopSession({ name }).catch(() => undefined);
        }
      },
      TEST_TIMEOUT_MS,
    );

    it(
      `shows that a turn runs and interrupts it with Escape only on the click of Interrupt (${device})`,
      async () => {
        const id = `interrupted-${device}`;
        const name = `nodes/local/sessions/${id}`;
        const keyLog = join(f.dir, `${id}.keys`);
        await f.sessions.createSession({
          parent: "nodes/local",
          sessionId: id,
          cwd: f.dir,
          command: ["env", `STANDIN_KEYLOG=${keyLog}`, ...QUICK_CLAUDE.slice(1)],
        });
        const status = async () => (await f.sessions.getSession({ name })).session;
        /** Escapes typed alone (not the start of a bracketed paste or another sequence). */
        const escapes = async () => (await readFile(keyLog, "latin1").catch(() => "")).split(LONE_ESCAPE).length - 1;
        try {
          await waitFor(async () => (await status())?.statusReason === StatusReason.NO_TURN, "idle at the start");
          // Idle: nothing to interrupt, and nothing is typed.
          const refused = await expectCode(f.sessions.interruptSession({ name }), Code.FailedPrecondition);
          expect(refused.rawMessage).toMatch(/^no turn is running in .*; nothing was typed$/);
          await f.sessions.sendChatMessage({ name, text: "a long task" });
          await waitFor(async () => (await status())?.status === SessionStatus.WORKING, "the turn running");
          const v = await pages.add(f.browser, options);
          await f.login(v.page, `/sessions/local/${id}/chat`);
          const bar = v.page.locator("sa-turn-bar .turn-bar");
          await bar.waitFor();
          expect((await bar.locator(".turn-text").textContent())?.trim()).toBe("Claude Code is working…");
          const button = bar.getByRole("button", { name: "Interrupt" });
          const box = await button.boundingBox();
          expect(box && box.x + box.width <= (options.viewport?.width ?? 0)).toBe(true);
          expect(await escapes()).toBe(0);
          await button.click();
          await waitFor(
            async () => (await status())?.statusReason === StatusReason.INTERRUPTED,
            "the turn interrupted",
          );
          await bar.waitFor({ state: "detached" });
          expect(await escapes()).toBe(1);
        } finally {
          await f.sessions.stopSession({ name }).catch(() => undefined);
        }
      },
      TEST_TIMEOUT_MS,
    );
  }

  it(
    "lays the list out compact, by attention or folder, without unmanaged shells, kept after a reload (desktop and phone)",
    async () => {
      const ids = ["lv-idle", "lv-busy", "lv-claude"];
      await f.sessions.createSession({ parent: "nodes/local", sessionId: "lv-idle", cwd: f.dir, command: BASH });
      await f.sessions.createSession({ parent: "nodes/local", sessionId: "lv-busy", cwd: f.dir, command: BASH });
      await f.sessions.createSession({
        parent: "nodes/local",
        sessionId: "lv-claude",
        cwd: f.dir,
        command: QUICK_CLAUDE,
      });
      await tmuxSession(f.tmux, "lv-raw", f.dir, "bash", "--norc", "--noprofile");
      const status = async (id: string) =>
        (await f.sessions.getSession({ name: `nodes/local/sessions/${id}` })).session;
      try {
        await waitFor(async () => (await status("lv-busy"))?.cli !== undefined, "the shell read");
        await f.tmux.run("send-keys", "-t", "=lv-busy:", "-l", "sleep 600");
        await f.tmux.run("send-keys", "-t", "=lv-busy:", "Enter");
        await waitFor(async () => (await status("lv-claude"))?.statusReason === StatusReason.NO_TURN, "claude idle");
        await f.sessions.sendChatMessage({ name: "nodes/local/sessions/lv-claude", text: "quick one" });
        await waitFor(async () => (await status("lv-claude"))?.status === SessionStatus.REVIEW, "claude in review");
        await waitFor(async () => (await status("lv-busy"))?.status === SessionStatus.WORKING, "the shell working");

        for (const options of [DESKTOP, PHONE]) {
          const v = await pages.add(f.browser, options);
          await f.login(v.page, "/?q=lv-");
          const list = v.page.locator("sa-session-list");
          const names = () => list.locator(".row-session .row-name").allTextContents();
          await waitFor(async () => (await names()).length === 4, "the four sessions listed");
          expect(await names()).toEqual(["lv-busy", "lv-claude", "lv-idle", "lv-raw"]);
          if (options === DESKTOP) {
            await list.getByRole("button", { name: "Compact" }).click();
            await list.getByLabel("Sort").selectOption("attention");
            await list.getByLabel("Group").selectOption("folder");
            await list.getByLabel("Hide shells").check();
          }
          // The layout is this browser's: the phone page sets it again, then both reload.
          if (options === PHONE) {
            // On a phone the layout controls are behind the list's View menu.
            await list.locator(".list-view-menu").tap();
            await list.getByRole("button", { name: "Compact" }).tap();
            await list.getByLabel("Sort").selectOption("attention");
            await list.getByLabel("Group").selectOption("folder");
            await list.getByLabel("Hide shells").tap();
          }
          await waitFor(async () => (await names()).length === 3, "the unmanaged shell hidden");
          expect(await names()).toEqual(["lv-claude", "lv-busy", "lv-idle"]);
          const header = list.locator(".row-folder .folder-title");
          expect(await header.count()).toBe(1);
          expect(await header.textContent()).toBe(f.dir);
          // The finished turn's row ends with the reply's last line (Session.reply_excerpt).
          expect(await list.locator(".row-session").first().locator(".row-reason").textContent()).toBe(
            "Turn finished: Done: quick one",
          );
          // The compact row's status word says the turn finished: it shows the reply's line alone, uncut.
          const reason = list.locator(".row-session").first().locator(".row-reason");
          expect(await reason.locator(".reason-lead").isVisible()).toBe(false);
          expect(await reason.evaluate((el) => el.scrollWidth > el.clientWidth)).toBe(false);
          const row = await list.locator(".row-session").first().boundingBox();
          expect(row?.height).toBe(36);
          await v.page.reload();
          await waitFor(async () => (await names()).length === 3, "the layout kept after a reload");
          expect(await names()).toEqual(["lv-claude", "lv-busy", "lv-idle"]);
          if (options === PHONE) await list.locator(".list-view-menu").tap();
          expect(await list.getByRole("button", { name: "Compact" }).getAttribute("aria-pressed")).toBe("true");
          expect(
            await v.page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth),
          ).toBe(true);
          const tools = await list.locator(".list-view-tools").boundingBox();
          expect(tools && tools.x + tools.width <= (options.viewport?.width ?? 0)).toBe(true);
        }
      } finally {
        for (const id of ids)
          await f.sessions.stopSession({ name: `nodes/local/sessions/${id}` }).catch(() => undefined);
        await f.tmux.run("kill-session", "-t", "=lv-raw").catch(() => undefined);
      }
    },
    TEST_TIMEOUT_MS,
  );
});
