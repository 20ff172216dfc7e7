import type { Client } from "@connectrpc/connect";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { NotificationService } from "../../../gen/staragent/v1/notification_service_pb.js";
import { describeError } from "../api/errors.js";
import { PUSH_DEVICE_KEY, type PushDevice } from "../state/push-device.js";
import { CountingTarget, FakeHost } from "../testing/fake-host.js";
import { PushDeviceController } from "./push-device.js";

/** A Map-backed localStorage. */
function memoryStorage(initial: Record<string, string> = {}) {
  const map = new Map(Object.entries(initial));
  return {
    map,
    getItem: (k: string) => map.get(k) ?? null,
    setItem: (k: string, v: string) => void map.set(k, v),
    removeItem: (k: string) => void map.delete(k),
  };
}

describe("PushDeviceController", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  function setUp(stored?: PushDevice) {
    const host = new FakeHost();
    const events = new CountingTarget();
    const reports: Array<{ subscription: string; session: string; visible: boolean }> = [];
    const client = {
      reportViewing: async (req: { subscription: string; session: string; visible: boolean }) => {
        reports.push({ subscription: req.subscription, session: req.session, visible: req.visible });
        return {};
      },
    } as unknown as Client<typeof NotificationService>;
    const storage = memoryStorage(stored ? { [PUSH_DEVICE_KEY]: JSON.stringify(stored) } : {});
    const routeListeners = new Set<() => void>();
    let viewed: string | undefined = "nodes/local/sessions/a";
    const toasts: string[] = [];
    const subscribe = vi.fn(async (_c: unknown, displayName: string) => {
      const device = { name: "pushSubscriptions/p1", displayName };
      storage.setItem(PUSH_DEVICE_KEY, JSON.stringify(device));
      return device;
    });
    const unsubscribe = vi.fn(async () => {
      storage.removeItem(PUSH_DEVICE_KEY);
    });
    const push = new PushDeviceController(host, {
      client,
      storage,
      viewedSession: () => viewed,
      subscribeRoute: (listener) => {
        routeListeners.add(listener);
        return () => routeListeners.delete(listener);
      },
      visible: () => true,
      toast: (message) => toasts.push(message),
      events,
      subscribe,
      unsubscribe,
    });
    const navigate = (session: string | undefined) => {
      viewed = session;
      for (const l of routeListeners) l();
    };
    return { host, events, reports, storage, routeListeners, toasts, subscribe, unsubscribe, push, navigate };
  }

  it("starts from the device the page remembered and reports what it shows while connected", () => {
    const { host, events, reports, routeListeners, push, navigate } = setUp({
      name: "pushSubscriptions/old",
      displayName: "Pixel",
    });
    expect(push.device).toEqual({ name: "pushSubscriptions/old", displayName: "Pixel" });
    host.connect();
    expect(reports).toEqual([
      { subscription: "pushSubscriptions/old", session: "nodes/local/sessions/a", visible: true },
    ]);
    navigate("nodes/local/sessions/b");
    expect(reports.at(-1)).toEqual({
      subscription: "pushSubscriptions/old",
      session: "nodes/local/sessions/b",
      visible: true,
    });
    expect(events.listeners).toBe(1);
    expect(routeListeners.size).toBe(1);
    host.disconnect();
    expect(events.listeners).toBe(0);
    expect(routeListeners.size).toBe(0);
    const before = reports.length;
    navigate("nodes/local/sessions/c");
    vi.advanceTimersByTime(60_000);
    expect(reports.length).toBe(before);
  });

  it("reports nothing until it subscribed, then at once under the Hub's name, and re-renders", async () => {
    const { host, reports, subscribe, push } = setUp();
    host.connect();
    expect(push.device).toBeUndefined();
    expect(reports).toEqual([]);
    await push.subscribe("Linux, Chrome");
    expect(subscribe).toHaveBeenCalledWith(expect.anything(), "Linux, Chrome", expect.anything());
    expect(push.device).toEqual({ name: "pushSubscriptions/p1", displayName: "Linux, Chrome" });
    expect(reports).toEqual([
      { subscription: "pushSubscriptions/p1", session: "nodes/local/sessions/a", visible: true },
    ]);
    expect(host.updates).toBe(1);
    host.disconnect();
  });

  it("tells the person when subscribing fails, in the browser's sentence or the Hub's described error", async () => {
    const { host, subscribe, toasts, push } = setUp();
    host.connect();
    subscribe.mockRejectedValueOnce(new Error("This browser offers no Web Push here."));
    await push.subscribe("Phone");
    const refused = new ConnectError("the Hub has no VAPID key yet", Code.FailedPrecondition);
    subscribe.mockRejectedValueOnce(refused);
    await push.subscribe("Phone");
    expect(push.device).toBeUndefined();
    expect(toasts[0]).toBe(
      "Notifications reach this device only while a dashboard page is open: This browser offers no Web Push here.",
    );
    expect(toasts[1]).toBe(
      `Notifications reach this device only while a dashboard page is open: ${describeError(refused)}`,
    );
    expect(toasts[1]).not.toContain("[failed_precondition]");
    expect(host.updates).toBe(2);
    host.disconnect();
  });

  it("unsubscribes a subscribed device, keeps it when the Hub refuses, and does nothing without one", async () => {
    const { host, unsubscribe, toasts, push, storage } = setUp({ name: "pushSubscriptions/old", displayName: "Pixel" });
    host.connect();
    unsubscribe.mockRejectedValueOnce(new ConnectError("down", Code.Unavailable));
    await push.unsubscribe();
    expect(push.device?.name).toBe("pushSubscriptions/old");
    expect(toasts).toHaveLength(1);
    expect(toasts[0]).toBe(
      `This device stays subscribed on the Hub: ${describeError(new ConnectError("down", Code.Unavailable))}`,
    );
    await push.unsubscribe();
    expect(push.device).toBeUndefined();
    expect(storage.map.has(PUSH_DEVICE_KEY)).toBe(false);
    await push.unsubscribe();
    expect(unsubscribe).toHaveBeenCalledTimes(2);
    host.disconnect();
  });
});
