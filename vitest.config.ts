import { defineConfig } from "vitest/config";

/** Integration tests start real tmux servers and processes: allow them time, run two files at once. */
export default defineConfig({
  test: {
    include: ["services/**/*.test.ts", "examples/**/*.test.ts", "test/**/*.test.ts", "web/src/**/*.test.ts"],
    // The compatibility suite runs the real CLIs with its own config (make compat).
    exclude: ["test/compat/**", "**/node_modules/**"],
    // Tests spawn the compiled command: build dist/ first so they never run stale code.
    globalSetup: ["test/support/build-services.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // What a poll waits for crosses real processes (a click, the Hub, tmux, the page again): vitest's
    // 1 s default was short on a loaded 2-core runner (a queued message's row took longer to show).
    expect: { poll: { timeout: 10_000 } },
    pool: "forks",
    maxWorkers: 2,
    reporters: ["default", "./test/support/failure-summary.ts"],
  },
});
