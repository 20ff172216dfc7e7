import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, paginate } from "./pagination.js";

const items = ["a", "b", "c", "d", "e"];
const key = (s: string) => s;

function codeOf(fn: () => unknown): Code | "ok" {
  try {
    fn();
    return "ok";
  } catch (err) {
    return ConnectError.from(err).code;
  }
}

describe("paginate", () => {
  it("walks every item once, page by page", () => {
    const first = paginate(items, key, 2, "", "q");
    expect(first.page).toEqual(["a", "b"]);
    const second = paginate(items, key, 2, first.nextPageToken, "q");
    expect(second.page).toEqual(["c", "d"]);
    const third = paginate(items, key, 2, second.nextPageToken, "q");
    expect(third).toEqual({ page: ["e"], nextPageToken: "" });
  });

  it("continues after the last key even when items changed between pages", () => {
    const first = paginate(items, key, 2, "", "q");
    expect(paginate(["a", "c", "d"], key, 2, first.nextPageToken, "q").page).toEqual(["c", "d"]);
    expect(paginate(["a"], key, 2, first.nextPageToken, "q")).toEqual({ page: [], nextPageToken: "" });
  });

  it("pages in key order whatever the order of the items, so no item is skipped", () => {
    const shuffled = ["local/b", "alpha/z", "local/a", "w1-x/a", "w1/a"];
    const seen: string[] = [];
    let token = "";
    do {
      const res = paginate(shuffled, key, 2, token, "q");
      seen.push(...res.page);
      token = res.nextPageToken;
    } while (token !== "");
    expect(seen).toEqual(["alpha/z", "local/a", "local/b", "w1-x/a", "w1/a"]);
  });

  it("uses the default size for 0 and gives no token when everything fits", () => {
    const many = Array.from({ length: DEFAULT_PAGE_SIZE + 1 }, (_, i) => String(i).padStart(4, "0"));
    expect(paginate(many, key, 0, "", "q").page).toHaveLength(DEFAULT_PAGE_SIZE);
    expect(paginate(items, key, 5, "", "q").nextPageToken).toBe("");
  });

  it("refuses bad sizes and tokens with INVALID_ARGUMENT", () => {
    const token = paginate(items, key, 2, "", "q").nextPageToken;
    expect(codeOf(() => paginate(items, key, -1, "", "q"))).toBe(Code.InvalidArgument);
    expect(codeOf(() => paginate(items, key, MAX_PAGE_SIZE + 1, "", "q"))).toBe(Code.InvalidArgument);
    expect(codeOf(() => paginate(items, key, 2, "not-a-token", "q"))).toBe(Code.InvalidArgument);
    expect(codeOf(() => paginate(items, key, 2, token, "another query"))).toBe(Code.InvalidArgument);
    expect(codeOf(() => paginate(items, key, 2, token, "q"))).toBe("ok");
  });
});
