import { describe, expect, it } from "vitest";
import { type Osc52Choice, osc52Decision, osc52Preview, storageChoices } from "./osc52-consent.js";

function memoryStorage() {
  const items = new Map<string, string>();
  return { getItem: (k: string) => items.get(k) ?? null, setItem: (k: string, v: string) => void items.set(k, v) };
}

describe("OSC 52 consent", () => {
  it("asks on a session's first write, then does what the person chose, per session", () => {
    const store = storageChoices(memoryStorage());
    expect(osc52Decision("nodes/local/sessions/a", store)).toBe("ask");
    store.set("nodes/local/sessions/a", "allow");
    store.set("nodes/local/sessions/b", "deny");
    expect(osc52Decision("nodes/local/sessions/a", store)).toBe("copy");
    expect(osc52Decision("nodes/local/sessions/b", store)).toBe("drop");
    expect(osc52Decision("nodes/w1/sessions/a", store)).toBe("ask");
  });

  it("reads nothing it did not write, and survives a storage that refuses", () => {
    const junk = { getItem: () => "yes", setItem: () => undefined };
    expect(osc52Decision("s", storageChoices(junk))).toBe("ask");
    const refusing = {
      getItem: (): string | null => {
        throw new Error("denied");
      },
      setItem: (_k: string, _v: Osc52Choice) => {
        throw new Error("denied");
      },
    };
    const store = storageChoices(refusing);
    store.set("s", "allow");
    expect(osc52Decision("s", store)).toBe("ask");
  });

  it("previews the first lines and characters, counting the rest", () => {
    expect(osc52Preview("rm -rf ~")).toEqual({ shown: "rm -rf ~", more: 0 });
    const long = Array.from({ length: 10 }, (_, i) => `line ${i}`).join("\n");
    expect(osc52Preview(long).shown.split("\n")).toHaveLength(6);
    expect(osc52Preview("x".repeat(500))).toEqual({ shown: "x".repeat(200), more: 300 });
  });
});
