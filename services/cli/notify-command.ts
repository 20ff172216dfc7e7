import { parseArgs } from "node:util";
import { toJson } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import {
  type Delivery,
  DeliveryOutcome,
  DeliverySchema,
  NotificationKind,
  WebhookFormat,
  WebhookSchema,
} from "../../gen/staragent/v1/notification_service_pb.js";
import { connectHub, UsageError } from "./client.js";
import type { Command } from "./command.js";
import { ago, alignColumns, enumWord } from "./format.js";
import { readSecret } from "./secret-input.js";

const USAGE = [
  "usage: staragent notify ls [--json]",
  "       staragent notify add NAME (--url URL | --url-file FILE) --format generic|ntfy|slack|discord|telegram|lark",
  "                            [--secret-file FILE] [--chat-id ID] [--node NODE] [--session GLOB]",
  "                            [--kind prompt|turn-finished ...]",
  "       staragent notify rm NAME",
  "       staragent notify test NAME",
  "       staragent notify deliveries [NAME] [--limit N] [--json]",
  "       staragent notify devices [--json]",
  "Secrets never come from the command line: a bot token or signing secret from --secret-file FILE",
  "(- for stdin; Telegram asks for its bot token when none is given), and a URL that is itself a secret",
  "(Slack, Discord, Lark) from --url-file FILE. NAME is the webhook's id (lowercase letters, digits, '-');",
  "for test and deliveries it may also be a push device (pushSubscriptions/ID, from 'devices').",
].join("\n");

/** `--format` names: the proto's WebhookFormat values in lowercase (`generic`, `ntfy`, …). */
const FORMATS: Record<string, WebhookFormat> = Object.fromEntries(
  Object.entries(WebhookFormat)
    .filter((e): e is [string, WebhookFormat] => typeof e[1] === "number" && e[1] !== WebhookFormat.UNSPECIFIED)
    .map(([name, value]) => [name.toLowerCase(), value]),
);
const KINDS: Record<string, NotificationKind> = {
  prompt: NotificationKind.PROMPT,
  "turn-finished": NotificationKind.TURN_FINISHED,
};

/**
 * `staragent notify`: the webhooks the Hub tells when a session needs someone (and the push devices
 * subscribed from dashboards), a test send, and the delivery log, through the Hub's
 * NotificationService. Secrets are read from files or stdin, never from arguments (`ps` shows those to
 * every user of the machine), and never printed.
 */
export const notifyCommand: Command = {
  run: async (args, config) => {
    const [verb, ...rest] = args;
    const hub = () => connectHub(config);
    const json = (flags: string[]) =>
      parseArgs({ args: flags, allowPositionals: true, options: { json: { type: "boolean" } } });
    switch (verb) {
      case "ls":
      case "list": {
        const { values, positionals } = json(rest);
        if (positionals.length > 0) throw new UsageError(USAGE);
        const { webhooks } = await (await hub()).notifications.listWebhooks({});
        if (values.json) {
          process.stdout.write(
            `${JSON.stringify({ webhooks: webhooks.map((w) => toJson(WebhookSchema, w)) }, null, 2)}\n`,
          );
          return 0;
        }
        const rows = [
          ["WEBHOOK", "FORMAT", "URL", "SECRET", "FILTERS"],
          ...webhooks.map((w) => [
            w.name.replace(/^webhooks\//, ""),
            enumWord(WebhookFormat, w.format),
            w.urlDisplay || "-",
            w.hasSecret ? "stored" : "-",
            filtersText(w.nodeFilter, w.sessionPattern, w.kinds),
          ]),
        ];
        process.stdout.write(`${alignColumns(rows)}\n`);
        return 0;
      }
      case "add":
        return add(rest, hub);
      case "rm":
      case "remove": {
        const name = onlyName(rest);
        await (await hub()).notifications.removeWebhook({ name: webhookName(name) });
        process.stdout.write(`removed ${webhookName(name)}\n`);
        return 0;
      }
      case "test": {
        const name = onlyName(rest);
        const { delivery } = await (await hub()).notifications.testNotification({ target: targetName(name) });
        if (!delivery) throw new Error("the Hub answered no delivery");
        process.stdout.write(`${deliveryLine(delivery)}\n`);
        return delivery.outcome === DeliveryOutcome.DELIVERED ? 0 : 1;
      }
      case "deliveries":
        return deliveries(rest, hub);
      case "devices": {
        const { values, positionals } = json(rest);
        if (positionals.length > 0) throw new UsageError(USAGE);
        const { subscriptions } = await (await hub()).notifications.listPushSubscriptions({});
        if (values.json) {
          process.stdout.write(
            `${JSON.stringify({ subscriptions: subscriptions.map((s) => ({ name: s.name, displayName: s.displayName, pushService: s.pushService })) }, null, 2)}\n`,
          );
          return 0;
        }
        const rows = [
          ["DEVICE", "NAME", "PUSH SERVICE", "LAST DELIVERY"],
          ...subscriptions.map((s) => [
            s.name,
            s.displayName,
            s.pushService,
            s.lastDeliveryTime ? ago(timestampDate(s.lastDeliveryTime)) : "never",
          ]),
        ];
        process.stdout.write(`${alignColumns(rows)}\n`);
        return 0;
      }
      default:
        throw new UsageError(USAGE);
    }
  },
};

async function add(args: string[], hub: () => ReturnType<typeof connectHub>): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      url: { type: "string" },
      "url-file": { type: "string" },
      format: { type: "string" },
      "secret-file": { type: "string" },
      "chat-id": { type: "string", default: "" },
      node: { type: "string", default: "" },
      session: { type: "string", default: "" },
      kind: { type: "string", multiple: true, default: [] },
    },
  });
  const [name] = positionals;
  if (name === undefined || positionals.length > 1) throw new UsageError(USAGE);
  const format = FORMATS[values.format ?? ""];
  if (format === undefined)
    throw new UsageError(`--format: choose one of ${Object.keys(FORMATS).join(", ")}\n${USAGE}`);
  if (values.url !== undefined && values["url-file"] !== undefined)
    throw new UsageError("give --url or --url-file, not both");
  if (values["url-file"] !== undefined && values["url-file"] === values["secret-file"]) {
    throw new UsageError("--url-file and --secret-file cannot both read the same file or stdin");
  }
  const url =
    values["url-file"] !== undefined
      ? await readSecret(values["url-file"], "the webhook URL", "Webhook URL: ")
      : (values.url ?? "");
  if (url === "" && format !== WebhookFormat.TELEGRAM) throw new UsageError(`--url or --url-file is needed\n${USAGE}`);
  const kinds = values.kind.map((k) => {
    const kind = KINDS[k];
    if (kind === undefined) throw new UsageError(`--kind: choose prompt or turn-finished, not ${JSON.stringify(k)}`);
    return kind;
  });
  const secret =
    values["secret-file"] !== undefined
      ? await readSecret(values["secret-file"], "the secret", "Secret: ")
      : format === WebhookFormat.TELEGRAM
        ? await readSecret(undefined, "the Telegram bot token", "Telegram bot token (from @BotFather): ")
        : "";
  const { webhook } = await (await hub()).notifications.addWebhook({
    webhookId: name,
    url,
    format,
    secret,
    chatId: values["chat-id"],
    nodeFilter: values.node,
    sessionPattern: values.session,
    kinds,
  });
  process.stdout.write(
    `added ${webhook?.name} (${enumWord(WebhookFormat, format)}, ${webhook?.urlDisplay || "Telegram's API"}${webhook?.hasSecret ? ", secret stored" : ""}); try it: staragent notify test ${name}\n`,
  );
  return 0;
}

async function deliveries(args: string[], hub: () => ReturnType<typeof connectHub>): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { json: { type: "boolean" }, limit: { type: "string", default: "50" } },
  });
  if (positionals.length > 1) throw new UsageError(USAGE);
  const limit = Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new UsageError("--limit: a number from 1 to 1000");
  const target = positionals[0] === undefined ? "" : targetName(positionals[0]);
  const res = await (await hub()).notifications.listDeliveries({ target, pageSize: limit });
  if (values.json) {
    process.stdout.write(
      `${JSON.stringify({ deliveries: res.deliveries.map((d) => toJson(DeliverySchema, d)) }, null, 2)}\n`,
    );
    return 0;
  }
  const rows = [
    ["WHEN", "TARGET", "SESSION", "KIND", "OUTCOME", "TRY", "HTTP", "SUMMARY / ERROR"],
    ...res.deliveries.map((d) => [
      d.time ? ago(timestampDate(d.time)) : "-",
      d.target,
      d.session || "-",
      enumWord(NotificationKind, d.kind),
      enumWord(DeliveryOutcome, d.outcome),
      String(d.attempt),
      d.httpStatus ? String(d.httpStatus) : "-",
      d.error || d.summary,
    ]),
  ];
  process.stdout.write(`${alignColumns(rows)}\n`);
  return 0;
}

function onlyName(args: string[]): string {
  const { positionals } = parseArgs({ args, allowPositionals: true, options: {} });
  const [name] = positionals;
  if (name === undefined || positionals.length > 1) throw new UsageError(USAGE);
  return name;
}

function webhookName(name: string): string {
  return name.startsWith("webhooks/") ? name : `webhooks/${name}`;
}

/** A webhook id, `webhooks/ID` or `pushSubscriptions/ID`, as a target's resource name. */
function targetName(name: string): string {
  return name.startsWith("pushSubscriptions/") ? name : webhookName(name);
}

function filtersText(node: string, pattern: string, kinds: readonly NotificationKind[]): string {
  const parts = [
    node ? `node ${node}` : "",
    pattern ? `session ${pattern}` : "",
    kinds.length > 0 ? kinds.map((k) => enumWord(NotificationKind, k)).join("+") : "",
  ].filter(Boolean);
  return parts.length > 0 ? parts.join(", ") : "every notification";
}

function deliveryLine(d: Delivery): string {
  const outcome = enumWord(DeliveryOutcome, d.outcome);
  const status = d.httpStatus ? ` (HTTP ${d.httpStatus})` : "";
  return `${d.target}: ${outcome}${status}${d.error ? `: ${d.error}` : ""}`;
}
