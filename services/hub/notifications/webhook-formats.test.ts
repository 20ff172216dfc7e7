import { describe, expect, it } from "vitest";
import { globMatches, webhookTakes } from "./dispatcher.js";
import type { NotificationEvent } from "./notification-events.js";
import type { StoredWebhook } from "./notification-store.js";
import { webhookRequest } from "./webhook-formats.js";

const event: NotificationEvent = {
  kind: "prompt",
  session: "nodes/w1/sessions/fix-bug",
  node: "w1",
  sessionName: "fix-bug",
  key: "prompt:fp",
  title: "fix-bug on w1",
  summary: "asks: <b>@everyone</b> & more",
  path: "/sessions/w1/fix-bug",
};
const hook = (over: Partial<StoredWebhook>): StoredWebhook => ({
  id: "h",
  url: "https://hooks.example.test/x",
  format: "generic",
  secret: "",
  chatId: "",
  nodeFilter: "",
  sessionPattern: "",
  kinds: [],
  createTime: 0,
  ...over,
});

describe("webhook filters", () => {
  it("take an event by node, session name glob and kind; a test always", () => {
    expect(webhookTakes(hook({}), event)).toBe(true);
    expect(webhookTakes(hook({ nodeFilter: "w2" }), event)).toBe(false);
    expect(webhookTakes(hook({ nodeFilter: "w1", sessionPattern: "fix-*" }), event)).toBe(true);
    expect(webhookTakes(hook({ sessionPattern: "fix" }), event)).toBe(false);
    expect(webhookTakes(hook({ kinds: ["turn-finished"] }), event)).toBe(false);
    expect(webhookTakes(hook({ kinds: ["turn-finished"] }), { ...event, kind: "test" })).toBe(true);
  });

  it("match globs whole, with `*` and `?` only", () => {
    expect(globMatches("api-?", "api-1")).toBe(true);
    expect(globMatches("api-?", "api-12")).toBe(false);
    expect(globMatches("a.b", "axb")).toBe(false);
    expect(globMatches("*", "")).toBe(true);
  });
});

describe("webhook bodies", () => {
  it("escape Slack's control characters and mention nobody on Discord", () => {
    const slack = webhookRequest(hook({ format: "slack" }), event, "https://hub/x");
    expect(JSON.parse(slack.body).text).toBe(
      "*fix-bug on w1*: asks: &lt;b&gt;@everyone&lt;/b&gt; &amp; more\n<https://hub/x|Open>",
    );
    const discord = webhookRequest(hook({ format: "discord" }), event, "https://hub/x");
    expect(JSON.parse(discord.body).allowed_mentions).toEqual({ parse: [] });
  });

  it("encode a title that is not ASCII for ntfy's header, and send its token as a bearer", () => {
    const ntfy = webhookRequest(
      hook({ format: "ntfy", secret: "tk" }),
      { ...event, title: "fix-bug on wörk" },
      "https://hub/x",
    );
    expect(ntfy.headers.title).toBe(`=?UTF-8?B?${Buffer.from("fix-bug on wörk").toString("base64")}?=`);
    expect(ntfy.headers.authorization).toBe("Bearer tk");
  });

  it("read Telegram's and Lark's verdict from their 200 answers", () => {
    const telegram = webhookRequest(
      hook({ format: "telegram", url: "", secret: "1:t", chatId: "5" }),
      event,
      "https://hub/x",
    );
    expect(telegram.url).toBe("https://api.telegram.org/bot1:t/sendMessage");
    expect(telegram.refusal?.('{"ok":true}')).toBeUndefined();
    expect(telegram.refusal?.('{"ok":false,"description":"Bad Request: chat not found"}')).toBe(
      "Bad Request: chat not found",
    );
    const lark = webhookRequest(hook({ format: "lark" }), event, "https://hub/x", 1_700_000_000_000);
    expect(JSON.parse(lark.body).sign).toBeUndefined();
    expect(lark.refusal?.('{"code":19021,"msg":"sign match fail"}')).toBe("sign match fail");
    expect(lark.refusal?.('{"code":0}')).toBeUndefined();
  });
});
