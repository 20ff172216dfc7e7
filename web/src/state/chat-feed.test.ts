import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, createRouterTransport } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { type ChatMessage, ChatMessageSchema, ChatRole } from "../../../gen/staragent/v1/session_pb.js";
import {
  type GetChatRequest,
  GetChatResponseSchema,
  SessionService,
} from "../../../gen/staragent/v1/session_service_pb.js";
import { CHAT_PAGE_SIZE, ChatFeed } from "./chat-feed.js";

const msg = (id: string, text = id): ChatMessage => create(ChatMessageSchema, { id, role: ChatRole.USER, text });

/** A Hub answering GetChat from a script the test writes; every request is recorded. */
function hub(
  answer: (
    req: GetChatRequest,
    n: number,
  ) => Promise<Partial<ReturnType<typeof res>>> | Partial<ReturnType<typeof res>>,
) {
  const requests: GetChatRequest[] = [];
  const transport = createRouterTransport((router) => {
    router.service(SessionService, {
      async getChat(req) {
        requests.push(req);
        return create(GetChatResponseSchema, await answer(req, requests.length));
      },
    });
  });
  return { client: createClient(SessionService, transport), requests };
}

function res(
  messages: ChatMessage[],
  nextCursor: string,
  extra: { reset?: boolean; hasMore?: boolean; olderPageToken?: string } = {},
) {
  return { messages, nextCursor, ...extra };
}

const ids = (feed: ChatFeed) => feed.messages.map((m) => m.id);

describe("ChatFeed", () => {
  it("opens on the newest page, then fetches only what changed since the cursor, replacing a redrawn tail", async () => {
    const { client, requests } = hub((_req, n) =>
      n === 1
        ? res([msg("1"), msg("2"), msg("3")], "c1", { hasMore: true, olderPageToken: "t1" })
        : res([msg("3", "3 edited"), msg("4")], "c2"),
    );
    const newer: number[] = [];
    const feed = new ChatFeed(client, () => "nodes/local/sessions/a", { newerShown: (n) => newer.push(n) });
    expect(feed.wants("r1")).toBe(true);
    await feed.refresh("r1");
    expect(requests[0]).toMatchObject({ name: "nodes/local/sessions/a", cursor: "", pageSize: CHAT_PAGE_SIZE });
    expect(ids(feed)).toEqual(["1", "2", "3"]);
    expect(feed.loaded && feed.hasOlder).toBe(true);
    expect(feed.wants("r1")).toBe(false);
    await feed.refresh("r2");
    expect(requests[1]?.cursor).toBe("c1");
    expect(ids(feed)).toEqual(["1", "2", "3", "4"]);
    expect(feed.messages[2]?.text).toBe("3 edited");
    expect(newer).toEqual([3, 2]);
  });

  it("shows bidi controls and invisible characters in messages as escapes, on every page", async () => {
    const hidden = "ok\u202edaolnwod\u202c \u200b\u{e0049}\u{e0047}";
    const { client } = hub((req) =>
      req.before === "t1"
        ? res([msg("0", "older\u2066")], "", { hasMore: false })
        : res(
            [msg("1", hidden), create(ChatMessageSchema, { id: "2", toolName: "Bash\u202e", toolTarget: "rm\u2067" })],
            "c1",
            {
              hasMore: true,
              olderPageToken: "t1",
            },
          ),
    );
    const feed = new ChatFeed(client, () => "nodes/local/sessions/a");
    await feed.refresh("r1");
    await feed.loadOlder("r1");
    expect(feed.messages.map((m) => [m.text, m.toolName, m.toolTarget])).toEqual([
      ["older\\u2066", "", ""],
      ["ok\\u202edaolnwod\\u202c \\u200b\\u{e0049}\\u{e0047}", "", ""],
      ["", "Bash\\u202e", "rm\\u2067"],
    ]);
  });

  it("asks once at a time: a change during a call fetches again after it, with the newest revision", async () => {
    let release: () => void = () => {};
    const { client, requests } = hub(async (_req, n) => {
      if (n === 1) await new Promise<void>((r) => (release = r));
      return res([msg(String(n))], `c${n}`);
    });
    const feed = new ChatFeed(client, () => "nodes/local/sessions/a");
    const first = feed.refresh("r1");
    await new Promise((r) => setTimeout(r, 10));
    void feed.refresh("r2");
    void feed.refresh("r3");
    expect(requests).toHaveLength(1);
    release();
    await first;
    await new Promise((r) => setTimeout(r, 10));
    expect(requests).toHaveLength(2);
    expect(feed.wants("r3")).toBe(false);
  });

  it("puts an older page in front without repeating messages, and a whole chat replaces everything", async () => {
    const { client, requests } = hub((req, n) => {
      if (n === 1) return res([msg("3"), msg("4")], "c1", { hasMore: true, olderPageToken: "t1" });
      if (req.before === "t1") return res([msg("1"), msg("2"), msg("3")], "", { hasMore: false });
      return res([msg("9")], "c9", { reset: true });
    });
    const order: string[] = [];
    const feed = new ChatFeed(client, () => "s", {
      beforeOlder: () => order.push(`before ${ids(feed).length}`),
      olderShown: () => order.push(`after ${ids(feed).length}`),
    });
    await feed.refresh("r1");
    await feed.loadOlder("r1");
    expect(requests[1]).toMatchObject({ before: "t1", pageSize: CHAT_PAGE_SIZE });
    expect(ids(feed)).toEqual(["1", "2", "3", "4"]);
    expect(order).toEqual(["before 2", "after 4"]);
    expect(feed.hasOlder).toBe(false);
    await feed.loadOlder("r1");
    expect(requests).toHaveLength(2);
    await feed.refresh("r2");
    expect(ids(feed)).toEqual(["9"]);
  });

  it("reads the whole chat again when an older page's log is gone, and says when reading fails", async () => {
    const { client, requests } = hub((req, n) => {
      if (n === 1) return res([msg("5")], "c1", { hasMore: true, olderPageToken: "old" });
      if (req.before === "old") throw new ConnectError("the log was replaced", Code.FailedPrecondition);
      if (n === 3) return res([msg("new")], "c3");
      throw new ConnectError("node w1 is unreachable", Code.Unavailable);
    });
    const feed = new ChatFeed(client, () => "s");
    await feed.refresh("r1");
    await feed.loadOlder("r2");
    await new Promise((r) => setTimeout(r, 20));
    expect(requests[2]).toMatchObject({ cursor: "" });
    expect(ids(feed)).toEqual(["new"]);
    await feed.refresh("r3");
    expect(feed.error).toMatch(/^The conversation could not be read: /);
    // A failed read is asked again for the same revision.
    expect(feed.wants("r3")).toBe(true);
  });

  it("stop() abandons a read under way without an error", async () => {
    const { client } = hub(() => new Promise(() => {}));
    const feed = new ChatFeed(client, () => "s");
    const reading = feed.refresh("r1");
    await new Promise((r) => setTimeout(r, 10));
    feed.stop();
    await reading;
    expect(feed.error).toBe("");
    expect(feed.loaded).toBe(false);
  });
});
