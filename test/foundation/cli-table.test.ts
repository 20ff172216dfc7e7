import { describe, expect, it } from "vitest";
import { createBuiltInAgents } from "../../services/node/agents/registry.js";
import { CLI_TABLE, cliKey } from "../../web/src/state/cli-table.js";

/**
 * The dashboard's CLI table (web/src/state/cli-table.ts, which may import only gen/) against the Node's
 * agent registry, with no list of CLIs written here: every module the registry has must be in the
 * table under the module's own filter keyword, and each adoptable agent must have a New session preset
 * whose program the module recognises once it runs.
 */
describe("the dashboard's CLI table and the agent registry", () => {
  const agents = createBuiltInAgents();

  it.each(agents.modules.map((m) => [m.name, m] as const))(
    "%s: the table's filter keyword is the module's name",
    (_name, module) => {
      expect(cliKey(module.cli)).toBe(module.name);
    },
  );

  it.each(agents.modules.filter((m) => m.adoptable).map((m) => [m.name, m] as const))(
    "%s: New session offers it, and what the preset starts is recognised as it",
    (_name, module) => {
      const presets = CLI_TABLE[module.cli].presets;
      expect(presets.length).toBeGreaterThan(0);
      for (const preset of presets) {
        const [program = "", ...args] = preset.argv;
        // Started from PATH: the kernel's short name is the program's, argv[0] its path.
        const process = {
          pid: 4242,
          ppid: 1,
          comm: program.slice(0, 15),
          argv: [`/usr/local/bin/${program}`, ...args],
          startTicks: 1,
        };
        expect(module.recognises(process), preset.id).toBe(true);
      }
    },
  );
});
