import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { failureOf, type HubFixture, startHubFixture } from "../foundation/hub-fixture.js";

describe("AddNode on a real Hub refuses URLs no Node can be reached at", () => {
  let f: HubFixture;
  beforeAll(async () => {
    f = await startHubFixture();
  });
  afterAll(async () => {
    await f?.close();
  });

  it.each([
    ["port 0", "http://127.0.0.1:0", /port 0 cannot be reached/],
    ["the unspecified address", "http://0.0.0.0:8081", /0\.0\.0\.0 is an address to listen on/],
    ["a path", "http://127.0.0.1:8081/staragent", /leave out the path/],
  ])("refuses %s with a sentence, and adds nothing", async (_what, url, message) => {
    const refused = await failureOf(f.nodes.addNode({ nodeId: "w1", url, token: "a-node-token-0123456789" }));
    expect(refused.code).toBe("InvalidArgument");
    expect(refused.message).toMatch(message);
    expect((await f.nodes.listNodes({})).nodes.map((n) => n.name)).toEqual(["nodes/local"]);
  });
});
