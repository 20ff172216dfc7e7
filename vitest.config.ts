import { defineConfig } from "vitest/config";

/** Integration tests start real tmux servers and processes: allow them time, run two files at once. */
export default defineConfig({
  test: {
    include: ["services/**/*.test.ts", "examples/**/*.test.ts", "test/**/*.test.ts", "web/src/**/*.test.ts"],
    // The compatibility suite runs the real CLIs with its own config (make compat).
    exclude: ["test/compat/**", "**/node_modules/**"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    maxWorkers: 2,
    reporters: ["default"],
  },
});
