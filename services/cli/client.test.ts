import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { eachTempDir } from "../../test/support/temp-dir.js";
import { readEnvironment } from "../common/config.js";
import { readUserToken, sessionArgument, UsageError } from "./client.js";

describe("sessionArgument", () => {
  it("names sessions on the Hub's machine, on a node, or in full", () => {
    expect(sessionArgument("fix-bug")).toBe("nodes/local/sessions/fix-bug");
    expect(sessionArgument("w1/fix-bug")).toBe("nodes/w1/sessions/fix-bug");
    expect(sessionArgument("nodes/w1/sessions/fix-bug")).toBe("nodes/w1/sessions/fix-bug");
  });
});

describe("readUserToken", () => {
  let home: string;
  eachTempDir("sa-cli-", (made) => (home = made));

  it("prefers STARAGENT_AUTH_TOKEN, then reads $STARAGENT_HOME/auth_token", async () => {
    await writeFile(join(home, "auth_token"), "from-file-0123456789\n");
    expect(await readUserToken(readEnvironment({ STARAGENT_HOME: home, STARAGENT_AUTH_TOKEN: "from-env" }))).toBe(
      "from-env",
    );
    expect(await readUserToken(readEnvironment({ STARAGENT_HOME: home }))).toBe("from-file-0123456789");
  });

  it("says how to get a token when there is none", async () => {
    const missing = readUserToken(readEnvironment({ STARAGENT_HOME: home }));
    await expect(missing).rejects.toBeInstanceOf(UsageError);
    await expect(missing).rejects.toThrow(/set STARAGENT_AUTH_TOKEN, or start the Hub once/);
  });
});
