import { Cli } from "../../../gen/staragent/v1/session_pb.js";
import type { ChatParser } from "../chat/chat-parser.js";
import { plainChatParser } from "../chat/plain-parser.js";
import type { AgentModule } from "./agent.js";
import { AntigravityModule } from "./antigravity/antigravity-module.js";
import type { ChatHistoryReader } from "./chat-history.js";
import { ClaudeModule } from "./claude/claude-module.js";
import { CodexModule } from "./codex/codex-module.js";
import { CopilotModule } from "./copilot/copilot-module.js";
import { CursorModule } from "./cursor/cursor-module.js";
import { DroidModule } from "./droid/droid-module.js";
import { GeminiModule } from "./gemini/gemini-module.js";
import { KiloModule } from "./kilo/kilo-module.js";
import { OpencodeModule } from "./opencode/opencode-module.js";
import { PiModule } from "./pi/pi-module.js";
import { QwenModule } from "./qwen/qwen-module.js";
import { ShellModule } from "./shell/shell-module.js";

/** The `cli=` filter name of programs no module recognises. */
const OTHER_FILTER_NAME = "other";

/**
 * A fresh set of the built-in CLI modules, in the order they are tried on a pane's processes. Each
 * module keeps what it read (logs, bindings, database connections), so every machine gets its own.
 * Adding a CLI adds its module here (one line), after the proto's `Cli` value and its folder.
 */
export function createBuiltInAgents(): AgentRegistry {
  return new AgentRegistry([
    new ClaudeModule(),
    new CodexModule(),
    new OpencodeModule(),
    new GeminiModule(),
    new QwenModule(),
    new CopilotModule(),
    new PiModule(),
    new KiloModule(),
    new DroidModule(),
    new CursorModule(),
    new AntigravityModule(),
    new ShellModule(),
  ]);
}

/**
 * The CLIs one machine supports: the status engine recognises and reads them, the session filter
 * names them, AdoptSession offers the adoptable ones, chat parses their screens and reads their
 * logs. A machine takes one as an option, so a test can register a module of its own.
 */
export class AgentRegistry {
  /** `cli=` filter names and the value each stands for, in registry order, `other` last. */
  readonly filterNames: ReadonlyMap<string, Cli>;
  private readonly byCli: ReadonlyMap<Cli, AgentModule>;

  constructor(readonly modules: readonly AgentModule[]) {
    const byCli = new Map<Cli, AgentModule>();
    const names = new Map<string, Cli>();
    for (const module of modules) {
      if (byCli.has(module.cli) || module.cli === Cli.OTHER || module.cli === Cli.UNSPECIFIED) {
        throw new Error(`agent registry: ${module.name} takes Cli ${Cli[module.cli]}, which is taken or reserved`);
      }
      if (names.has(module.name) || module.name === OTHER_FILTER_NAME) {
        throw new Error(`agent registry: the name ${module.name} is taken`);
      }
      byCli.set(module.cli, module);
      names.set(module.name, module.cli);
    }
    names.set(OTHER_FILTER_NAME, Cli.OTHER);
    this.byCli = byCli;
    this.filterNames = names;
  }

  /** The module of a CLI, if one is registered. */
  get(cli: Cli): AgentModule | undefined {
    return this.byCli.get(cli);
  }

  /**
   * The name of a CLI as its module gives it (`cli=` filters, state files, messages), never the
   * proto enum's key (a module may take any value); `fallback` for a program without a module.
   */
  nameOf(cli: Cli, fallback = ""): string {
    return this.byCli.get(cli)?.name ?? fallback;
  }

  /** True when unmanaged sessions running `cli` may be adopted. */
  adoptable(cli: Cli): boolean {
    return this.byCli.get(cli)?.adoptable ?? false;
  }

  /** The chat parser of a CLI; programs without a module get the plain parser (the screen as text). */
  chatParserFor(cli: Cli): ChatParser {
    return this.byCli.get(cli)?.chatParser ?? plainChatParser;
  }

  /** The native-log reader of a CLI, undefined when it keeps none. */
  historyFor(cli: Cli): ChatHistoryReader | undefined {
    return this.byCli.get(cli)?.history;
  }

  /** Releases what the modules hold open (database connections); the machine calls it when it stops. */
  close(): void {
    for (const module of this.modules) module.close?.();
  }
}

/**
 * The `cli=` filter names of the built-in CLIs: what a Hub accepts before it asks its Nodes (each
 * Node checks the filter again against its own registry).
 */
export const BUILT_IN_FILTER_NAMES: ReadonlyMap<string, Cli> = createBuiltInAgents().filterNames;
