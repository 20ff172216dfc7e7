import { afterAll, afterEach, beforeAll, expect } from "vitest";
import { OpenPages } from "./browser.js";
import {
  type DashboardFixture,
  type DashboardFixtureOptions,
  SETUP_TIMEOUT_MS,
  startDashboard,
} from "./dashboard-fixture.js";

/** A suite's dashboard (started before its first test) and the pages its tests open. */
export interface DashboardSuite {
  /** The dashboard; only inside a test or hook, after the suite's start. */
  readonly f: DashboardFixture;
  readonly pages: OpenPages;
}

/**
 * Registers, in the calling `describe`, the hooks of a suite over one dashboard: started before all
 * of its tests, every page closed after each test (a test that leaves one open fails), stopped after
 * all, also when a test failed.
 */
export function dashboardSuite(options?: DashboardFixtureOptions): DashboardSuite {
  let fixture: DashboardFixture | undefined;
  const pages = new OpenPages();
  beforeAll(async () => {
    fixture = await startDashboard(options);
  }, SETUP_TIMEOUT_MS);
  afterEach(async () => {
    expect(await pages.closeAll()).toEqual([]);
  });
  afterAll(async () => {
    await fixture?.close();
  }, SETUP_TIMEOUT_MS);
  return {
    get f() {
      if (!fixture) throw new Error("the suite's dashboard has not started (used outside a test?)");
      return fixture;
    },
    pages,
  };
}
