import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { checkNodeUrl } from "./node-url.js";

function refusal(text: string): string {
  try {
    checkNodeUrl(text);
  } catch (err) {
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.InvalidArgument);
    return (err as ConnectError).rawMessage;
  }
  throw new Error(`${text} was accepted`);
}

describe("checkNodeUrl", () => {
  it("accepts a Node's origin, with or without the trailing slash", () => {
    expect(checkNodeUrl("http://w1.tail:8081").origin).toBe("http://w1.tail:8081");
    expect(checkNodeUrl("https://10.0.0.2:8081/").origin).toBe("https://10.0.0.2:8081");
  });

  it("refuses unusable URLs with a sentence saying why", () => {
    expect(refusal("http://127.0.0.1:0")).toMatch(/port 0 cannot be reached; give the port the Node listens on/);
    expect(refusal("http://0.0.0.0:8081")).toMatch(/0\.0\.0\.0 is an address to listen on, not one to reach a Node at/);
    expect(refusal("http://[::]:8081")).toMatch(/\[::\] is an address to listen on/);
    expect(refusal("http://w1:8081/api?x=1")).toMatch(/leave out the path, query and fragment/);
    expect(refusal("http://w1:99999")).toMatch(/is not a URL/);
    expect(refusal("ftp://w1:8081")).toMatch(/must be http:\/\/ or https:\/\//);
    expect(refusal("http://u:p@w1:8081")).toMatch(/without credentials/);
  });
});
