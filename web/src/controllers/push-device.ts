import { type Client, ConnectError } from "@connectrpc/connect";
import type { ReactiveController, ReactiveControllerHost } from "lit";
import type { NotificationService } from "../../../gen/staragent/v1/notification_service_pb.js";
import { describeError } from "../api/errors.js";
import {
  type DeviceStorage,
  type PushDevice,
  storedDevice,
  subscribeDevice,
  unsubscribeDevice,
  ViewingReporter,
} from "../state/push-device.js";

/** What the push-device controller needs from the page. */
export interface PushDeviceOptions {
  readonly client: Client<typeof NotificationService>;
  /** Where the subscription is remembered (localStorage; tests pass a Map-backed one). */
  readonly storage: DeviceStorage | undefined;
  /** The session on screen (`nodes/{node}/sessions/{id}`), if any. */
  readonly viewedSession: () => string | undefined;
  /** Calls the listener after each route change; returns the unsubscribe function. */
  readonly subscribeRoute: (listener: () => void) => () => void;
  readonly visible: () => boolean;
  /** Tells the person what failed (the app's toasts). */
  readonly toast: (message: string, tone: "error") => void;
  /** Where visibility changes are heard (the document; tests pass their own). */
  readonly events?: EventTarget;
  /** Replaceable for tests, which have no service worker. */
  readonly subscribe?: typeof subscribeDevice;
  readonly unsubscribe?: typeof unsubscribeDevice;
}

/**
 * This device's Web Push subscription on the Hub, for as long as the page is open: subscribing (or
 * renaming) and unsubscribing it, telling the person when either fails, and telling the Hub which
 * session this page shows while connected (so this device alone gets no push for it). Page
 * notifications go on working without a subscription (a browser with no push service).
 */
export class PushDeviceController implements ReactiveController {
  private current: PushDevice | undefined;
  private readonly viewing: ViewingReporter;
  private unsubscribeRoute: (() => void) | undefined;

  constructor(
    private readonly host: ReactiveControllerHost,
    private readonly options: PushDeviceOptions,
  ) {
    this.current = storedDevice(options.storage);
    this.viewing = new ViewingReporter({
      client: options.client,
      device: () => this.current,
      viewedSession: options.viewedSession,
      visible: options.visible,
      events: options.events,
    });
    host.addController(this);
  }

  /** This device's subscription, when the notification setting made one. */
  get device(): PushDevice | undefined {
    return this.current;
  }

  hostConnected(): void {
    this.viewing.start();
    this.unsubscribeRoute = this.options.subscribeRoute(this.viewing.changed);
  }

  hostDisconnected(): void {
    this.viewing.stop();
    this.unsubscribeRoute?.();
    this.unsubscribeRoute = undefined;
  }

  /** Subscribes this device to the Hub's Web Push under `displayName`, or renames it. */
  async subscribe(displayName: string): Promise<void> {
    try {
      this.current = await (this.options.subscribe ?? subscribeDevice)(
        this.options.client,
        displayName,
        this.options.storage,
      );
      this.viewing.changed();
    } catch (err) {
      // The browser's own refusals are sentences already; Connect errors are described.
      const why = err instanceof ConnectError || !(err instanceof Error) ? describeError(err) : err.message;
      this.options.toast(`Notifications reach this device only while a dashboard page is open: ${why}`, "error");
    }
    this.host.requestUpdate();
  }

  /** Forgets this device's subscription, on the Hub and in the browser; nothing when there is none. */
  async unsubscribe(): Promise<void> {
    if (!this.current) return;
    try {
      await (this.options.unsubscribe ?? unsubscribeDevice)(this.options.client, this.options.storage);
      this.current = undefined;
    } catch (err) {
      this.options.toast(`This device stays subscribed on the Hub: ${describeError(err)}`, "error");
    }
    this.host.requestUpdate();
  }
}
