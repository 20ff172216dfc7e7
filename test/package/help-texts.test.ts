import { describe, expect, it } from "vitest";
import { runCli } from "../support/servers.js";

/**
 * The `staragent` commands a help text names: each `staragent WORD` (with the next word, which for
 * `nodes` and `system` is their verb), quoted or not.
 */
function mentions(text: string): { command: string; verb: string }[] {
  return [...text.matchAll(/staragent ([a-z][a-z-]*)(?: ([a-z]+))?/g)].map((m) => ({
    command: m[1] ?? "",
    verb: m[2] ?? "",
  }));
}

describe("help texts name only commands that exist", () => {
  it("every command the Hub's, the Node's and `system`'s help texts name is in `staragent --help`, with its verb", async () => {
    const help = await runCli(["--help"], {});
    expect(help.code).toBe(0);
    // The table's lines: two spaces, the command, its usage.
    const usages = new Map(
      [...help.stdout.matchAll(/^ {2}([a-z]+) +(.*)$/gm)].map((m) => [m[1] ?? "", m[2] ?? ""] as const),
    );
    expect([...usages.keys()]).toEqual(expect.arrayContaining(["hub", "node", "nodes", "system", "ls", "attach"]));

    const texts = [
      { args: ["hub", "--help"], code: 0 },
      { args: ["node", "--help"], code: 0 },
      { args: ["system"], code: 2 },
    ];
    let named = 0;
    for (const { args, code } of texts) {
      const result = await runCli(args, {});
      expect(result.code, args.join(" ")).toBe(code);
      const text = result.stdout + result.stderr;
      for (const { command, verb } of mentions(text)) {
        named++;
        expect(usages.has(command), `'staragent ${command}' in 'staragent ${args.join(" ")}'`).toBe(true);
        // `nodes` and `system` take a verb: it must be one their usage lists.
        if (command === "nodes" || command === "system") {
          expect(usages.get(command)?.split(/[\s|[\]]+/), `'staragent ${command} ${verb}'`).toContain(verb);
        }
      }
    }
    // The texts do name commands (hub: 'staragent nodes add'; system: its verbs, hub and node).
    expect(named).toBeGreaterThanOrEqual(6);
  });
});
