import { describe, expect, it } from "vitest";
import { parseStat } from "../../services/node/agents/process-table.js";
import { programNames } from "../../services/node/agents/program.js";
import {
  allSessionViewFormats,
  parseAllSessionViews,
  parseSessionView,
  type SessionView,
  sessionViewFormats,
} from "../../services/node/terminal/terminal-tmux.js";
import { recordFormat } from "../../services/node/tmux/format-records.js";
import { type PaneInfo, paneFormat, parsePanes } from "../../services/node/tmux/panes.js";
import { renderFormat } from "../support/tmux-format.js";
import { fuzz, mutateText, type Random } from "./fuzz.js";

/** A view a terminal can be sized to: whole, positive sizes and numeric client pids. */
function usableView(view: SessionView): boolean {
  return (
    Number.isInteger(view.size.cols) &&
    view.size.cols >= 1 &&
    Number.isInteger(view.size.rows) &&
    view.size.rows >= 1 &&
    view.clients.every((c) => Number.isInteger(c.pid))
  );
}

/** Values tmux prints for a pane's fields: mostly plausible, now and then anything at all. */
function paneValues(r: Random): Record<string, string> {
  const number = () => (r.chance(0.9) ? String(r.int(2_000_000_000)) : r.text(12));
  const flag = () => (r.chance(0.9) ? r.pick(["0", "1"]) : r.text(3));
  return {
    session_name: r.chance(0.7) ? `s${r.int(50)}` : r.text(30),
    session_id: `$${r.int(100)}`,
    session_created: number(),
    session_attached: number(),
    session_activity: number(),
    "@staragent-origin": r.pick(["", "created", r.text(10)]),
    window_id: `@${r.int(100)}`,
    window_active: flag(),
    window_width: number(),
    window_height: number(),
    pane_id: `%${r.int(100)}`,
    pane_active: flag(),
    pane_pid: number(),
    pane_current_command: r.text(40),
    pane_current_path: r.text(80),
    pane_dead: flag(),
    alternate_on: flag(),
    history_size: number(),
    cursor_x: number(),
    cursor_y: number(),
    pane_title: r.text(60),
    window_activity: number(),
  };
}

const NUMERIC: ReadonlyArray<keyof PaneInfo> = [
  "sessionCreated",
  "sessionAttached",
  "sessionActivity",
  "windowWidth",
  "windowHeight",
  "windowActivity",
  "panePid",
  "historySize",
  "cursorX",
  "cursorY",
];

describe("fuzz: tmux format output", () => {
  it("record framing gives back exactly the values it framed, whatever they hold, around any junk", async () => {
    await fuzz(
      "record framing",
      (r) => {
        const fields = 1 + r.int(6);
        const records = Array.from({ length: r.int(5) }, () => Array.from({ length: fields }, () => r.text(60)));
        const junk = Array.from({ length: records.length + 1 }, () => (r.chance(0.5) ? r.text(40) : "\n"));
        return { fields, records, junk };
      },
      ({ fields, records, junk }) => {
        const names = Array.from({ length: fields }, (_, i) => `f${i}`);
        const format = recordFormat(names.map((n) => `#{${n}}`));
        let output = junk[0] ?? "";
        records.forEach((values, i) => {
          output += renderFormat(format.format, Object.fromEntries(names.map((n, j) => [n, values[j] ?? ""])));
          output += junk[i + 1] ?? "";
        });
        expect(format.parse(output)).toEqual(records);
      },
    );
  });

  it("parsePanes never throws on cut, mixed or garbled output, and every number it gives is finite", async () => {
    await fuzz(
      "parse panes",
      (r) => {
        const format = paneFormat();
        let output = "";
        for (let i = r.int(6); i > 0; i--) output += `${renderFormat(format.format, paneValues(r))}\n`;
        return { format, output: r.chance(0.5) ? mutateText(r, output) : output };
      },
      ({ format, output }) => {
        for (const pane of parsePanes(output, format)) {
          for (const key of NUMERIC) expect(Number.isFinite(pane[key])).toBe(true);
          expect(typeof pane.sessionName).toBe("string");
        }
      },
    );
  });

  it("parseSessionView never throws and gives a usable size or none", async () => {
    await fuzz(
      "parse session view",
      (r) => {
        const formats = sessionViewFormats();
        let output = "";
        for (let i = r.int(4); i > 0; i--) {
          output += `${renderFormat(formats.clients.format, {
            client_pid: r.chance(0.8) ? String(r.int(100_000)) : r.text(8),
            client_tty: `/dev/pts/${r.int(50)}`,
            client_flags: r.pick(["attached,focused", "attached,ignore-size", r.text(20)]),
          })}\n`;
        }
        output += renderFormat(formats.window.format, {
          window_width: r.chance(0.8) ? String(r.int(500)) : r.text(6),
          window_height: r.chance(0.8) ? String(r.int(200)) : r.text(6),
          status: r.pick(["on", "off", "2", "5", r.text(4)]),
        });
        return { formats, output: r.chance(0.5) ? mutateText(r, output) : output };
      },
      ({ formats, output }) => {
        const view = parseSessionView(output, formats);
        expect(view === undefined || usableView(view)).toBe(true);
      },
    );
  });

  it("parseAllSessionViews never throws and gives usable sizes only", async () => {
    await fuzz(
      "parse all session views",
      (r) => {
        const formats = allSessionViewFormats();
        const session = () => (r.chance(0.7) ? `s${r.int(5)}` : r.text(12));
        let output = "";
        for (let i = r.int(6); i > 0; i--) {
          output += `${renderFormat(formats.clients.format, {
            session_name: session(),
            client_pid: r.chance(0.8) ? String(r.int(100_000)) : r.text(8),
            client_tty: `/dev/pts/${r.int(50)}`,
            client_flags: r.pick(["attached,focused", "attached,ignore-size", r.text(20)]),
          })}\n`;
        }
        for (let i = r.int(6); i > 0; i--) {
          output += `${renderFormat(formats.windows.format, {
            session_name: session(),
            window_active: r.pick(["0", "1", r.text(2)]),
            window_width: r.chance(0.8) ? String(r.int(500)) : r.text(6),
            window_height: r.chance(0.8) ? String(r.int(200)) : r.text(6),
            status: r.pick(["on", "off", "2", "5", r.text(4)]),
          })}\n`;
        }
        return { formats, output: r.chance(0.5) ? mutateText(r, output) : output };
      },
      ({ formats, output }) => {
        const views = parseAllSessionViews(output, formats);
        expect([...views.values()].every(usableView)).toBe(true);
      },
    );
  });

  it("/proc stat and cmdline parsing never throws and gives finite numbers", async () => {
    const stat = "4242 (node) S 4200 4242 4200 34816 4242 4194304 1 0 0 0 10 5 0 0 20 0 11 0 123456 1000000 5000";
    await fuzz(
      "proc stat",
      (r) => ({
        stat: r.chance(0.8) ? mutateText(r, stat) : r.text(200),
        cmdline: r.chance(0.7) ? Buffer.from(mutateText(r, "node\0/usr/lib/codex/codex.js\0--yolo\0")) : r.bytes(100),
      }),
      ({ stat: text, cmdline }) => {
        const info = parseStat(4242, text, cmdline);
        const wellFormed =
          info === undefined ||
          (Number.isFinite(info.ppid) &&
            Number.isFinite(info.startTicks) &&
            info.argv.every((a) => typeof a === "string"));
        expect(wellFormed).toBe(true);
        expect(info === undefined || programNames(info).names.size > 0).toBe(true);
      },
    );
  });
});
