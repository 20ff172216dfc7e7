import { stripVTControlCharacters } from "node:util";
import type { Reporter, TestModule } from "vitest/node";

/** Lines of an error message kept per failed test: the first, and the ones naming what was seen. */
const KEPT_LINE = /^(the mock's newest requests|\S+ must stay:|\S+: [A-Z_]+\/[A-Z_]+ prompt=)/;
/** Longest line printed: a summary that scrolls past a CI log's tail defeats its purpose. */
const MAX_LINE = 240;
/** Failed tests listed; the rest are counted. */
const MAX_TESTS = 8;

/**
 * Prints, after vitest's own report, one short block per failed test: its file and name, the first
 * line of its error and the lines that say what the test saw instead. The default report puts pane
 * dumps between the failures, so a CI log's tail often shows only the last failure's dump; this
 * block is the last thing printed, and it is small enough to stay in that tail.
 */
export default class FailureSummary implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const failed: string[] = [];
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const result = test.result();
        if (result.state !== "failed") continue;
        const message = stripVTControlCharacters(result.errors?.[0]?.message ?? "(no error message)");
        const lines = message.split("\n");
        const kept = [lines[0] ?? "", ...lines.slice(1).filter((l) => KEPT_LINE.test(l))];
        failed.push(
          [`${module.moduleId.split("/").slice(-2).join("/")} > ${test.fullName}`, ...kept]
            .map((l, i) => (i === 0 ? "  ✗ " : "      ") + clip(l))
            .join("\n"),
        );
      }
    }
    if (failed.length === 0) return;
    const more = failed.length > MAX_TESTS ? `\n  … and ${failed.length - MAX_TESTS} more` : "";
    process.stdout.write(
      `\nFailed tests (${failed.length}), in order:\n${failed.slice(0, MAX_TESTS).join("\n")}${more}\n`,
    );
  }
}

function clip(line: string): string {
  return line.length > MAX_LINE ? `${line.slice(0, MAX_LINE - 1)}…` : line;
}
