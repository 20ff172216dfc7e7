import { describe, expect, it } from "vitest";
import { pushIntoScrollback, scrollbackPart } from "./history.js";
import { withCtrl } from "./keys.js";
import { osc52Text } from "./osc52.js";

const b64 = (s: string) => btoa(String.fromCharCode(...new TextEncoder().encode(s)));

describe("osc52Text", () => {
  it("copies the text of a payload, with or without a selection target", () => {
    expect(osc52Text(`c;${b64("hello")}`)).toBe("hello");
    expect(osc52Text(`;${b64("tmux sends no target")}`)).toBe("tmux sends no target");
    expect(osc52Text(`;${b64("größe 世界")}`)).toBe("größe 世界");
  });

  it("ignores queries, empty and malformed payloads", () => {
    expect(osc52Text("c;?")).toBeUndefined();
    expect(osc52Text("c;")).toBeUndefined();
    expect(osc52Text(";")).toBeUndefined();
    expect(osc52Text("no-semicolon")).toBeUndefined();
    expect(osc52Text("c;not base64!")).toBeUndefined();
  });
});

describe("attach history", () => {
  const history = new TextEncoder().encode("old 1\r\nold 2\r\nscreen 1\r\nscreen 2\r\n");
  it("keeps only the scrollback part; the live output redraws the screen", () => {
    expect(new TextDecoder().decode(scrollbackPart(history, 2))).toBe("old 1\r\nold 2\r\n");
    expect(scrollbackPart(history, 4).length).toBe(0);
    expect(scrollbackPart(history, 0)).toBe(history);
    expect(pushIntoScrollback(24)).toBe("\n".repeat(23));
  });
});

describe("withCtrl", () => {
  it("turns the next key into its control code", () => {
    expect(withCtrl("c")).toBe("\x03");
    expect(withCtrl("D")).toBe("\x04");
    expect(withCtrl("[")).toBe("\x1b");
    expect(withCtrl("?")).toBe("\x7f");
    expect(withCtrl("1")).toBe("1");
    expect(withCtrl("ab")).toBe("ab");
  });
});
