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
    pool: "forks",
    maxWorkers: 2,
    reporters: ["default"],
  },
});
