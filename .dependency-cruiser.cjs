// @ts-check
/**
 * `make lint`'s dependency rules (docs/architecture.md, "Layers"), checked by dependency-cruiser:
 * imports point down only.
 *
 *   web     → gen, its own files, npm packages
 *   cli     → gen, common
 *   common  → gen (neither hub nor node)
 *   node    → gen, common; never hub
 *   hub     → gen, common, and the Node's entry point (services/node/index.ts) only
 *   bin     → anything in services/: the `staragent` command's composition root
 *   nothing under services/ → test/, except the tests themselves
 *
 * Inside services/node/ (the tests next to the code are exempt: they assemble whole machines):
 *   tmux/ and store/ are leaves; terminal/ and system/ use only tmux/;
 *   agents/ uses chat/ only for the parser contract and its building blocks, chat/ uses agents/ only
 *   through the agent contract and the registry; nothing but the registry names an agent module folder;
 *   the subfolders never reach up into the machine's top-level files (chat implements two of its
 *   interfaces: session-lookup.ts and session-service.ts's ChatBackend).
 * And no file cycle anywhere.
 *
 * Every import counts, `import type` included (a type is a dependency too). A failure prints
 * `error RULE: FROM → TO` and the rule's comment below; the rule's name says what was broken.
 *
 * Usage: depcruise --config .dependency-cruiser.cjs services web   (from the repository, as make lint
 * runs it; test/lint/check-imports.test.ts runs the same over fixture trees)
 */

/** The parts of chat/ an agent module may build on: the parser contract and its shared helpers. */
const CHAT_FOR_AGENTS = "^services/node/chat/(chat-parser|screen-lines|plain-parser)\\.ts$";
/** The parts of agents/ the rest of the Node may use: the contract, the registry, shared readers. */
const AGENTS_CONTRACT =
  "^services/node/agents/(agent|chat-history|registry|process-table|prompt|conversations|usage/usage)\\.ts$";

/** @type {import("dependency-cruiser").IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "web-imports-only-gen",
      comment: "web imports only gen/ (and its own files and npm packages)",
      severity: "error",
      from: { path: "^web/" },
      to: { path: "^(services|test|bench|scripts|examples)/" },
    },
    {
      name: "cli-imports-only-gen-and-common",
      comment: "cli imports only gen/ and services/common/",
      severity: "error",
      from: { path: "^services/cli/" },
      to: { path: "^services/(hub|node|bin)/" },
    },
    {
      name: "common-imports-only-gen",
      comment: "common imports only gen/ (neither hub nor node)",
      severity: "error",
      from: { path: "^services/common/" },
      to: { path: "^services/(hub|node|cli|bin)/" },
    },
    {
      name: "node-never-imports-hub",
      comment: "node imports only gen/ and services/common/, never hub",
      severity: "error",
      from: { path: "^services/node/" },
      to: { path: "^services/(hub|cli|bin)/" },
    },
    {
      name: "hub-imports-node-only-through-its-entry",
      comment:
        "hub imports the Node only through its entry point (services/node/index.ts), and gen/ and services/common/",
      severity: "error",
      from: { path: "^services/hub/" },
      to: { path: "^services/(node/|cli/|bin/)", pathNot: "^services/node/index\\.ts$" },
    },
    {
      name: "services-never-import-test",
      comment: "nothing under services/ imports test/ except *.test.ts files (test-only code lives under test/)",
      severity: "error",
      from: { path: "^services/", pathNot: "\\.test\\.ts$" },
      to: { path: "^test/" },
    },
    {
      name: "imports-resolve-inside-the-repository",
      comment: "a relative import names a file that exists inside the repository",
      severity: "error",
      from: { path: "^(services|web)/" },
      to: { couldNotResolve: true, path: "^\\." },
    },
    {
      name: "no-file-cycles",
      comment: "no file imports itself through others: split the shared part into a file both import",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    {
      name: "node-tmux-and-store-are-leaves",
      comment: "services/node/tmux/ and services/node/store/ import nothing else of the Node",
      severity: "error",
      from: { path: "^services/node/(tmux|store)/", pathNot: "\\.test\\.ts$" },
      to: { path: "^services/node/", pathNot: "^services/node/$1/" },
    },
    {
      name: "node-terminal-and-system-use-only-tmux",
      comment: "services/node/terminal/ and services/node/system/ use only tmux/ of the rest of the Node",
      severity: "error",
      from: { path: "^services/node/(terminal|system)/", pathNot: "\\.test\\.ts$" },
      to: { path: "^services/node/", pathNot: ["^services/node/$1/", "^services/node/tmux/"] },
    },
    {
      name: "node-agents-use-only-the-chat-parser-contract",
      comment:
        "services/node/agents/ uses chat/ only for the parser contract and its building blocks (chat-parser, screen-lines, plain-parser)",
      severity: "error",
      from: { path: "^services/node/agents/", pathNot: "\\.test\\.ts$" },
      to: { path: "^services/node/chat/", pathNot: CHAT_FOR_AGENTS },
    },
    {
      name: "node-agents-use-no-other-node-part",
      comment: "services/node/agents/ uses only tmux/ and the chat parser contract of the rest of the Node",
      severity: "error",
      from: { path: "^services/node/agents/", pathNot: "\\.test\\.ts$" },
      to: { path: "^services/node/", pathNot: ["^services/node/(agents|chat|tmux)/"] },
    },
    {
      name: "node-uses-agents-only-through-the-contract",
      comment:
        "outside services/node/agents/, the Node uses agents only through agent.ts, chat-history.ts, process-table.ts, prompt.ts, conversations.ts, usage/usage.ts and the registry (never one CLI's module folder)",
      severity: "error",
      from: { path: "^services/node/", pathNot: ["^services/node/agents/", "\\.test\\.ts$"] },
      to: { path: "^services/node/agents/", pathNot: AGENTS_CONTRACT },
    },
    {
      name: "node-agent-modules-only-through-the-registry",
      comment:
        "inside services/node/agents/, only registry.ts names a CLI's module folder (agents/<cli>/; agents/usage/ is shared by them, not a CLI)",
      severity: "error",
      from: {
        path: "^services/node/agents/[^/]+\\.ts$",
        pathNot: ["^services/node/agents/registry\\.ts$", "\\.test\\.ts$"],
      },
      to: { path: "^services/node/agents/[^/]+/", pathNot: "^services/node/agents/usage/" },
    },
    {
      name: "node-status-does-not-reach-up",
      comment:
        "services/node/status/ uses only agents/ (through its contract), tmux/ and store/ of the rest of the Node",
      severity: "error",
      from: { path: "^services/node/status/", pathNot: "\\.test\\.ts$" },
      to: { path: "^services/node/", pathNot: "^services/node/(status|agents|tmux|store)/" },
    },
    {
      name: "node-chat-does-not-reach-up",
      comment:
        "services/node/chat/ uses agents/ (through its contract), status/, tmux/ and of the machine only the interfaces it implements (session-lookup.ts, session-service.ts)",
      severity: "error",
      from: { path: "^services/node/chat/", pathNot: "\\.test\\.ts$" },
      to: {
        path: "^services/node/",
        pathNot: "^services/node/((chat|agents|status|tmux)/|session-lookup\\.ts$|session-service\\.ts$)",
      },
    },
  ],
  options: {
    // Type-only imports count: a type is a dependency too.
    tsPreCompilationDeps: true,
    doNotFollow: { path: "node_modules" },
    exclude: { path: "(^|/)(node_modules|dist|fixtures)/" },
    // NodeNext specifiers name the .ts file beside the .js they spell (dependency-cruiser then tries
    // the .ts file itself).
    enhancedResolveOptions: { extensions: [".ts", ".js", ".mjs", ".cjs", ".json"] },
    reporterOptions: { text: { highlightFocused: false } },
  },
};
