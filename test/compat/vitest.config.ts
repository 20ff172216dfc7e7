import { defineConfig } from "vitest/config";

/**
 * The compatibility suite: the real agent CLIs in tmux, one file per CLI, three at a time (each has
 * its own Hub, tmux server and mock). Steps of a file share one running CLI, so they run in order.
 */
export default defineConfig({
  root: import.meta.dirname,
  test: {
    include: ["*.test.ts"],
    // The suite spawns the compiled command: build dist/ first so it never runs stale code.
    globalSetup: ["../support/build-services.ts"],
    // The CLIs must not see a CI runner's variables: some start headless under CI=true.
    setupFiles: ["./user-environment.ts"],
    pool: "forks",
    maxWorkers: 3,
    fileParallelism: true,
    reporters: ["default", "../support/failure-summary.ts"],
  },
});
