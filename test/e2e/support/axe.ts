import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import type { Page } from "playwright-core";

/** Impacts that fail the accessibility checks (axe's "minor" and "moderate" are reported, not failed). */
export const FAILING_IMPACTS = ["serious", "critical"];

/** One axe finding, reduced to what a failure message needs. */
export interface AxeFinding {
  readonly id: string;
  readonly impact: string;
  readonly help: string;
  readonly targets: string[];
}

let source: string | undefined;

/**
 * Runs axe-core (the pinned npm package) inside the page and returns its serious and critical
 * violations. The script goes in through the DevTools protocol (page.evaluate), which the page's
 * Content-Security-Policy does not govern, so the dashboard's CSP stays as strict as in production.
 */
export async function axeViolations(page: Page): Promise<AxeFinding[]> {
  if (source === undefined) {
    const path = createRequire(import.meta.url).resolve("axe-core/axe.min.js");
    source = await readFile(path, "utf8");
  }
  const loaded = await page.evaluate(() => typeof (window as { axe?: unknown }).axe !== "undefined");
  if (!loaded) await page.evaluate(source);
  const found = await page.evaluate(async () => {
    const axe = (
      window as unknown as {
        axe: {
          run(
            context: Document,
            options: object,
          ): Promise<{
            violations: Array<{ id: string; impact: string | null; help: string; nodes: Array<{ target: unknown[] }> }>;
          }>;
        };
      }
    ).axe;
    const result = await axe.run(document, { resultTypes: ["violations"] });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact ?? "unknown",
      help: v.help,
      targets: v.nodes.slice(0, 5).map((n) => n.target.map(String).join(" ")),
    }));
  });
  return found.filter((v) => FAILING_IMPACTS.includes(v.impact));
}
