import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { REPO_ROOT } from "../../support/servers.js";
import { waitFor } from "../../support/wait.js";

/** Debian's python, where python3-dbus and python3-gi are installed (not a virtualenv's). */
const SYSTEM_PYTHON = "/usr/bin/python3";
const SERVICE_SCRIPT = join(REPO_ROOT, "test/e2e/support/desktop-notifications.py");
/** Longest wait for the bus and the service to be up. */
const START_TIMEOUT_MS = 15_000;

/** A notification chromium handed to the desktop. */
export interface DesktopNotification {
  readonly id: number;
  readonly summary: string;
  readonly body: string;
}

/**
 * A private D-Bus session bus with a desktop notification service on it (desktop-notifications.py):
 * chromium started with `busAddress` shows web notifications through it, and `click` clicks one as a
 * person would, so the service worker gets a real `notificationclick`, with the user activation
 * `clients.openWindow` needs (an event the worker dispatches itself has none). Both processes are
 * this object's own and stopped by `close`.
 */
export class DesktopNotifications {
  readonly shown: DesktopNotification[] = [];
  busAddress = "";
  private bus: ChildProcess | undefined;
  private service: ChildProcess | undefined;

  async start(): Promise<void> {
    const bus = spawn("dbus-daemon", ["--session", "--nofork", "--nopidfile", "--print-address=1"], {
      stdio: ["ignore", "pipe", "ignore"],
    });
    this.bus = bus;
    this.busAddress = await firstLine(bus, "dbus-daemon");
    const service = spawn(SYSTEM_PYTHON, [SERVICE_SCRIPT], {
      stdio: ["pipe", "pipe", "inherit"],
      env: { ...process.env, DBUS_SESSION_BUS_ADDRESS: this.busAddress },
    });
    this.service = service;
    let ready = false;
    createInterface({ input: service.stdout as NodeJS.ReadableStream }).on("line", (line) => {
      const message = JSON.parse(line) as Partial<DesktopNotification> & { ready?: string };
      if (message.ready) ready = true;
      else this.shown.push(message as DesktopNotification);
    });
    await waitFor(() => ready || service.exitCode !== null, "the desktop notification service", START_TIMEOUT_MS);
    if (!ready) throw new Error(`the desktop notification service exited (${service.exitCode})`);
  }

  /** The first notification shown that `match` takes (shown already or to come). */
  waitForShown(match: (n: DesktopNotification) => boolean, what: string): Promise<DesktopNotification> {
    return waitFor(() => this.shown.find(match), `the desktop notification ${what}`, 20_000);
  }

  /** Clicks a shown notification (its default action). */
  click(id: number): void {
    this.service?.stdin?.write(`click ${id}\n`);
  }

  async close(): Promise<void> {
    for (const child of [this.service, this.bus]) {
      if (!child || child.exitCode !== null || child.signalCode !== null) continue;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    }
  }
}

function firstLine(child: ChildProcess, what: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    lines.once("line", (line) => resolve(line.trim()));
    child.once("exit", (code) => reject(new Error(`${what} exited (${code}) before it printed its address`)));
  });
}
