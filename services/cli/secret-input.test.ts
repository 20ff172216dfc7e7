import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { UsageError } from "./client.js";
import { promptHidden, type TerminalInput } from "./secret-input.js";

/** A terminal input that records, in one list with the prompt's writes, every mode change. */
function fakeTerminal() {
  const events: string[] = [];
  const emitter = new EventEmitter();
  const input: TerminalInput = {
    setRawMode: (mode) => events.push(mode ? "raw" : "cooked"),
    resume: () => events.push("resume"),
    pause: () => events.push("pause"),
    on: (event, listener) => emitter.on(event, listener),
    off: (event, listener) => emitter.off(event, listener),
  };
  const output = { write: (text: string) => events.push(`write ${JSON.stringify(text)}`) };
  const type = (text: string) => emitter.emit("data", Buffer.from(text));
  return { events, input, output, type, listeners: () => emitter.listenerCount("data") };
}

describe("promptHidden", () => {
  it("turns echo off before the prompt shows, so a token typed at once is never echoed", async () => {
    const t = fakeTerminal();
    const secret = promptHidden("Token: ", t.input, t.output);
    t.type("s3cr");
    t.type("et\r");
    expect(await secret).toBe("s3cret");
    expect(t.events).toEqual(["raw", 'write "Token: "', "resume", "cooked", "pause", 'write "\\n"']);
    expect(t.listeners()).toBe(0);
  });

  it("takes backspace as an edit, and ignores what follows the Enter", async () => {
    const t = fakeTerminal();
    const secret = promptHidden("Token: ", t.input, t.output);
    t.type("abx\u007fc\rlater");
    expect(await secret).toBe("abc");
  });

  it("gives up on Ctrl-C or Ctrl-D, with the terminal back in cooked mode", async () => {
    for (const key of ["\u0003", "\u0004"]) {
      const t = fakeTerminal();
      const secret = promptHidden("Token: ", t.input, t.output);
      t.type(`ab${key}`);
      await expect(secret).rejects.toEqual(new UsageError("no token given"));
      expect(t.events.slice(-3)).toEqual(["cooked", "pause", 'write "\\n"']);
    }
  });
});
