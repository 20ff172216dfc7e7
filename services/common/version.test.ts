import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SessionService } from "../../gen/staragent/v1/session_service_pb.js";
import { REPO_ROOT } from "../../test/support/servers.js";
import { CONTRACT_VERSION, STARAGENT_VERSION } from "./version.js";

describe("version constants", () => {
  it("STARAGENT_VERSION is package.json's version", async () => {
    const pkg: { version: string } = JSON.parse(await readFile(join(REPO_ROOT, "package.json"), "utf8"));
    expect(STARAGENT_VERSION).toBe(pkg.version);
  });

  it("CONTRACT_VERSION is the proto package of the generated services", () => {
    expect(SessionService.typeName).toBe(`${CONTRACT_VERSION}.SessionService`);
  });
});
