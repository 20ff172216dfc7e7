import { describe, expect, it } from "vitest";
import { renderFormat } from "../../../test/support/tmux-format.js";
import { activePanes, type PaneInfo, paneFormat, parsePanes } from "./panes.js";

/** Characters made-by-hand paths, program names and titles may hold. */
const ODD = "a\nb\x1fc\x1ed|e\t#{x};";

const format = paneFormat();

/** Whole numbers tmux always prints, so a record with only some fields given is still well formed. */
const NUMBERS = Object.fromEntries(
  [
    "session_created",
    "session_attached",
    "session_activity",
    "window_width",
    "window_height",
    "pane_pid",
    "history_size",
    "cursor_x",
    "cursor_y",
    "window_activity",
  ].map((f) => [f, "0"]),
);

function line(fields: Partial<Record<string, string>>): string {
  return `${renderFormat(format.format, { ...NUMBERS, ...fields })}\n`;
}

describe("parsePanes", () => {
  it("reads every field, whatever control characters the values hold", () => {
    const text = `${line({
      session_name: "a",
      session_id: "$1",
      session_created: "1700000000",
      session_attached: "2",
      session_activity: "1700000100",
      "@staragent-origin": "created",
      window_id: "@3",
      window_active: "1",
      window_width: "120",
      window_height: "40",
      pane_id: "%5",
      pane_active: "1",
      pane_pid: "4242",
      pane_current_command: `node${ODD}`,
      pane_current_path: `/srv/app${ODD}`,
      pane_dead: "0",
      alternate_on: "1",
      history_size: "12",
      cursor_x: "3",
      cursor_y: "7",
      pane_title: `left${ODD}right`,
      window_activity: "1700000200",
    })}`;
    const [pane] = parsePanes(text, format);
    expect(pane).toEqual({
      sessionName: "a",
      sessionId: "$1",
      sessionCreated: 1700000000,
      sessionAttached: 2,
      sessionActivity: 1700000100,
      windowActivity: 1700000200,
      sessionOrigin: "created",
      windowId: "@3",
      windowActive: true,
      windowWidth: 120,
      windowHeight: 40,
      paneId: "%5",
      paneActive: true,
      panePid: 4242,
      paneCurrentCommand: `node${ODD}`,
      paneCurrentPath: `/srv/app${ODD}`,
      paneDead: false,
      alternateOn: true,
      historySize: 12,
      cursorX: 3,
      cursorY: 7,
      paneTitle: `left${ODD}right`,
    });
  });

  it("reads the folder a pane started in while tmux cannot tell its current one", () => {
    const [pane] = parsePanes(line({ pane_current_path: "", pane_start_path: "/srv/started" }), format);
    expect(pane?.paneCurrentPath).toBe("/srv/started");
    const [moved] = parsePanes(line({ pane_current_path: "/srv/now", pane_start_path: "/srv/started" }), format);
    expect(moved?.paneCurrentPath).toBe("/srv/now");
  });

  it("skips a record with anything but a whole number where tmux prints one", () => {
    expect(parsePanes(line({ session_name: "a", pane_pid: "12x" }) + line({ session_name: "b" }), format)).toHaveLength(
      1,
    );
  });

  it("skips cut records, records of another query and stray text, keeping the records around them", () => {
    const cut = line({ session_name: "cut" }).slice(0, 40);
    const foreign = renderFormat(paneFormat().format, { session_name: "foreign" });
    const text = `junk\n${line({ session_name: "a" })}${cut}${foreign}\n${line({ session_name: "b" })}\n\n`;
    expect(parsePanes(text, format).map((p) => p.sessionName)).toEqual(["a", "b"]);
    expect(parsePanes("", format)).toEqual([]);
  });
});

describe("activePanes", () => {
  const pane = (session: string, id: string, windowActive: boolean, paneActive: boolean): PaneInfo =>
    ({ ...parsePanes(line({ session_name: session, pane_id: id }), format)[0], windowActive, paneActive }) as PaneInfo;

  it("picks the active pane of the active window per session", () => {
    const chosen = activePanes([
      pane("a", "%1", false, true),
      pane("a", "%2", true, false),
      pane("a", "%3", true, true),
      pane("b", "%4", false, false),
    ]);
    expect([...chosen].map(([s, p]) => [s, p.paneId])).toEqual([
      ["a", "%3"],
      ["b", "%4"],
    ]);
  });
});
