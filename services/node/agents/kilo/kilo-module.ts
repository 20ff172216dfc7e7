import { join } from "node:path";
import { Cli } from "../../../../gen/staragent/v1/session_pb.js";
import { OpencodeConversations } from "../opencode/opencode-conversations.js";
import { OpencodeModule } from "../opencode/opencode-module.js";
import { kiloChatParser } from "./chat-parser.js";
import { kiloScreenPrompt, readKiloPrompt } from "./prompt-reader.js";

/**
 * The names a Kilo CLI process goes by: npm's `kilo` (and its alias `kilocode`), a node script that
 * starts the native build `.kilo` next to it (docs/compat.md).
 */
const KILO_PROGRAMS = ["kilo", "kilocode", ".kilo"] as const;

/** Kilo CLI's database of a process: `$XDG_DATA_HOME/kilo/kilo.db`, else under `$HOME/.local/share`. */
export function kiloDbPath(env: Readonly<Record<string, string | undefined>>): string {
  const dataHome = env.XDG_DATA_HOME || join(env.HOME || "/", ".local", "share");
  return join(dataHome, "kilo", "kilo.db");
}

/**
 * Kilo CLI (`@kilocode/cli`), built on opencode's core: the same SQLite state (its own file), the
 * same session view and permission dialog, so it is opencode's module with Kilo's names, database
 * and dialog answers (Escape on its permission dialog does not reject: docs/compat.md). Sessions are
 * resumed with `kilo --session <id>`.
 */
export class KiloModule extends OpencodeModule {
  constructor() {
    super({
      cli: Cli.KILO,
      name: "kilo",
      programs: KILO_PROGRAMS,
      dbPath: kiloDbPath,
      screenPrompt: kiloScreenPrompt,
      readPrompt: readKiloPrompt,
      chatParser: kiloChatParser,
      newConversations: () => new OpencodeConversations("kilo", kiloDbPath),
      asksBeforeToolPart: true,
    });
  }
}
