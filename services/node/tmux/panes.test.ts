import { describe, expect, it } from "vitest";
import { FIELD_SEPARATOR } from "./client.js";
import { activePanes, PANE_FORMAT, type PaneInfo, parsePanes } from "./panes.js";

function line(fields: Partial<Record<string, string>>): string {
  const names = PANE_FORMAT.split(FIELD_SEPARATOR).map((f) => f.slice(2, -1));
  return names.map((n) => fields[n] ?? "").join(FIELD_SEPARATOR);
}

describe("parsePanes", () => {
  it("reads every field, and a title holding the separator keeps it", () => {
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
      pane_current_command: "node",
      pane_current_path: "/srv/app",
      pane_dead: "0",
      alternate_on: "1",
      history_size: "12",
      cursor_x: "3",
      cursor_y: "7",
      pane_title: `left${FIELD_SEPARATOR}right`,
    })}\n`;
    const [pane] = parsePanes(text);
    expect(pane).toEqual({
      sessionName: "a",
      sessionId: "$1",
      sessionCreated: 1700000000,
      sessionAttached: 2,
      sessionActivity: 1700000100,
      sessionOrigin: "created",
      windowId: "@3",
      windowActive: true,
      windowWidth: 120,
      windowHeight: 40,
      paneId: "%5",
      paneActive: true,
      panePid: 4242,
      paneCurrentCommand: "node",
      paneCurrentPath: "/srv/app",
      paneDead: false,
      alternateOn: true,
      historySize: 12,
      cursorX: 3,
      cursorY: 7,
      paneTitle: `left${FIELD_SEPARATOR}right`,
    });
  });

  it("skips empty and short lines", () => {
    expect(parsePanes(`\nshort${FIELD_SEPARATOR}line\n\n`)).toEqual([]);
  });
});

describe("activePanes", () => {
  const pane = (session: string, id: string, windowActive: boolean, paneActive: boolean): PaneInfo =>
    ({ ...parsePanes(line({ session_name: session, pane_id: id }))[0], windowActive, paneActive }) as PaneInfo;

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
