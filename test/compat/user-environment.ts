/**
 * Vitest setup file of the compatibility suite: runs in each worker before its test file, so the Hub,
 * the tmux server and the CLIs that the file starts inherit an environment like a person's terminal.
 *
 * A CI runner's own variables must not reach the CLIs. Gemini CLI 0.61.0 with `CI=true` starts headless
 * (it prints that the folder is not trusted and exits, leaving the pane at a shell prompt), Factory droid
 * draws nothing, and the Ink-based CLIs treat any `CI`, `CONTINUOUS_INTEGRATION` or `CI_*` variable as
 * "not a terminal" (seen on 2026-12-03; docs/compat.md "The environment"). StarAgent itself does not
 * filter a Node's environment: a pane inherits it, as any tmux pane does.
 */

/** Variables that CI runners set and that the CLIs (through `is-in-ci`, `ci-info` or their own checks) read. */
const CI_VARIABLES = new Set([
  "CI",
  "CONTINUOUS_INTEGRATION",
  "BUILD_ID",
  "BUILD_NUMBER",
  "RUN_ID",
  "TF_BUILD",
  "TEAMCITY_VERSION",
  "JENKINS_URL",
]);
/** Prefixes of CI vendors' variables (`CI_*` is the `is-in-ci` rule; the rest are the vendors `ci-info` knows best). */
const CI_PREFIXES = ["CI_", "GITHUB_", "GITLAB_", "BUILDKITE", "CIRCLE", "TRAVIS", "DRONE", "APPVEYOR", "CODEBUILD_"];

/** The names in `env` that mark a CI run, sorted. */
export function ciVariables(env: NodeJS.ProcessEnv): string[] {
  return Object.keys(env)
    .filter((name) => CI_VARIABLES.has(name) || CI_PREFIXES.some((prefix) => name.startsWith(prefix)))
    .sort();
}

const removed = ciVariables(process.env);
for (const name of removed) delete process.env[name];
if (removed.length > 0) {
  console.info(`compat: the CLIs run without the CI runner's variables ${removed.join(", ")}`);
}
