import { create } from "@bufbuild/protobuf";
import { createContextValues, createHandlerContext, type HandlerContext } from "@connectrpc/connect";
import { ChatRole } from "../../../gen/staragent/v1/session_pb.js";
import {
  GetChatRequestSchema,
  SessionService,
  WatchSessionsRequestSchema,
  type WatchSessionsResponse,
} from "../../../gen/staragent/v1/session_service_pb.js";
import { principalKey } from "../../common/context-keys.js";
import type { Logger } from "../../common/log.js";
import type { HubSessionService } from "../hub-session-service.js";
import { DeliveryLog } from "./delivery-log.js";
import { type DispatcherTiming, NotificationDispatcher } from "./dispatcher.js";
import { HubNotificationService } from "./notification-service.js";
import { openNotificationFiles } from "./notification-store.js";
import { loadOrCreateVapidKeys, type VapidKeys } from "./vapid-keys.js";

/** The `sub` of the Hub's VAPID JWT when STARAGENT_VAPID_SUBJECT names none. */
export const DEFAULT_VAPID_SUBJECT = "mailto:staragent@localhost";
/** Chat messages read to find a finished turn's reply. */
const REPLY_PAGE = 5;

/** The Hub's notifications: the service to serve and the dispatcher behind it. */
export interface HubNotifications {
  readonly service: HubNotificationService;
  readonly dispatcher: NotificationDispatcher;
  close(): Promise<void>;
}

/** What the Hub's notifications are built from. */
export interface HubNotificationsOptions {
  readonly home: string;
  readonly sessions: HubSessionService;
  readonly dashboardUrl: () => string;
  readonly log: Logger;
  readonly vapidSubject?: string;
  readonly timing?: Partial<DispatcherTiming>;
  /** The Hub's VAPID keys, when already loaded (loadOrCreateVapidKeys). */
  readonly keys?: VapidKeys;
}

/**
 * Builds and starts the Hub's notifications: VAPID keys (made once), the stored subscriptions and
 * webhooks, and the dispatcher fed by the Hub's own merged watch of every node, the same one a
 * dashboard gets, read in-process as the Hub's own caller.
 */
export async function startHubNotifications(options: HubNotificationsOptions): Promise<HubNotifications> {
  const keys = options.keys ?? (await loadOrCreateVapidKeys(options.home, options.log));
  const files = openNotificationFiles(options.home, options.log);
  const dispatcher = new NotificationDispatcher({
    files,
    deliveries: new DeliveryLog(options.home, options.log),
    keys,
    vapidSubject: options.vapidSubject ?? DEFAULT_VAPID_SUBJECT,
    dashboardUrl: options.dashboardUrl,
    log: options.log,
    timing: options.timing,
    watch: (signal) => watchAll(options.sessions, signal),
    reply: async (session, signal) => {
      const ctx = ownContext("getChat", signal);
      const res = await options.sessions.getChat(
        create(GetChatRequestSchema, { name: session, pageSize: REPLY_PAGE }),
        ctx,
      );
      return res.messages.findLast((m) => m.role === ChatRole.ASSISTANT)?.text;
    },
  });
  await dispatcher.start();
  return {
    service: new HubNotificationService(files, keys, dispatcher),
    dispatcher,
    close: () => dispatcher.close(),
  };
}

function watchAll(sessions: HubSessionService, signal: AbortSignal): AsyncIterable<WatchSessionsResponse> {
  return sessions.watchSessions(
    create(WatchSessionsRequestSchema, { parent: "nodes/-" }),
    ownContext("watchSessions", signal),
  );
}

/** The context of a call the Hub makes to its own SessionService, as its user (it holds the token). */
function ownContext(method: "watchSessions" | "getChat", signal: AbortSignal): HandlerContext {
  return createHandlerContext({
    service: SessionService,
    method: SessionService.method[method],
    protocolName: "connect",
    requestMethod: "POST",
    url: `internal:/staragent.v1.SessionService/${method}`,
    requestSignal: signal,
    contextValues: createContextValues().set(principalKey, { kind: "user", id: "hub-notifications" }),
  });
}
