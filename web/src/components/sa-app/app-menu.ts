import { html, nothing, type TemplateResult } from "lit";
import type { Preferences, PreferencesStore, ThemeChoice } from "../../state/preferences.js";
import type { PushDevice } from "../../state/push-device.js";
import { ReviewAlerts } from "../../state/review-alerts.js";

/** What the settings menu shows and what its controls do. */
export interface AppMenuView {
  readonly prefs: Preferences;
  readonly notifySupported: boolean;
  setPrefs(partial: Partial<Preferences>): void;
  toggleNotifications(on: boolean): void;
  testNotification(): void;
  /** This device's Web Push subscription on the Hub, if any. */
  readonly pushDevice: PushDevice | undefined;
  /** Subscribes this device to the Hub's Web Push, or forgets it. */
  togglePush(on: boolean): void;
  renameDevice(name: string): void;
  openAdopt(): void;
  /** Opens the webhooks (chat apps told like push devices). */
  openWebhooks(): void;
  logout(): void;
}

const THEME_LABELS: Record<ThemeChoice, string> = { system: "Like the system", light: "Light", dark: "Dark" };

/** The settings menu of the top bar: theme, notifications, the terminals' screen reader mode, logout. */
export function renderAppMenu(v: AppMenuView): TemplateResult {
  const p = v.prefs;
  return html`<details class="menu">
    <summary aria-label="Settings and more" title="Settings and more"><span aria-hidden="true">⋯</span></summary>
    <div class="menu-panel">
      <button class="narrow-only quiet" @click=${v.openAdopt}>Adopt sessions…</button>
      <fieldset>
        <legend>Theme</legend>
        ${(["system", "light", "dark"] as const).map(
          (t) => html`<label class="radio"
            ><input type="radio" name="theme" .checked=${p.theme === t} @change=${() => v.setPrefs({ theme: t })} />
            ${THEME_LABELS[t]}</label
          >`,
        )}
      </fieldset>
      <label class="check"
        ><input
          type="checkbox"
          .checked=${p.notify}
          ?disabled=${!v.notifySupported}
          @change=${(e: Event) => v.toggleNotifications((e.target as HTMLInputElement).checked)}
        />
        Notify me when a session needs review, or goes idle after a long run</label
      >
      ${v.notifySupported ? nothing : html`<p class="muted small">This browser cannot show notifications here.</p>`}
      ${p.notify ? html`<button class="quiet" @click=${v.testNotification}>Send a test notification</button>` : nothing}
      ${
        p.notify
          ? html`<label class="check"
              ><input
                type="checkbox"
                .checked=${v.pushDevice !== undefined}
                @change=${(e: Event) => v.togglePush((e.target as HTMLInputElement).checked)}
              />
              Also with no dashboard page open (Web Push to this device)</label
            >`
          : nothing
      }
      ${
        p.notify && v.pushDevice
          ? html`<label class="device-name"
              >This device's name on the Hub
              <input
                type="text"
                maxlength="80"
                .value=${v.pushDevice.displayName}
                @change=${(e: Event) => {
                  const name = (e.target as HTMLInputElement).value.trim();
                  if (name) v.renameDevice(name);
                }}
            /></label>`
          : nothing
      }
      <button class="quiet" @click=${v.openWebhooks}>Webhooks (chat apps, ntfy)…</button>
      <label class="check"
        ><input
          type="checkbox"
          .checked=${p.screenReader}
          @change=${(e: Event) => v.setPrefs({ screenReader: (e.target as HTMLInputElement).checked })}
        />
        Screen reader mode for terminals</label
      >
      <button class="quiet" @click=${v.logout}>Log out</button>
    </div>
  </details>`;
}

/** What the menu's notification controls act on. */
export interface NotificationSwitch {
  readonly preferences: Pick<PreferencesStore, "update">;
  readonly alerts: Pick<ReviewAlerts, "test">;
  toast(message: string, tone?: "info" | "error"): void;
  /** Forgets this device's Web Push subscription (notifications turned off). */
  turnedOff(): Promise<void>;
}

/** Turns notifications off, or on once the browser grants them, and says how it went. */
export async function toggleNotifications(on: boolean, s: NotificationSwitch): Promise<void> {
  if (!on) {
    s.preferences.update({ notify: false });
    await s.turnedOff();
    return;
  }
  const result = await ReviewAlerts.enable();
  s.preferences.update({ notify: result === "granted" });
  if (result === "granted") {
    s.toast("Notifications are on: you will hear about sessions that need review.");
  } else {
    s.toast(
      result === "unsupported"
        ? "This browser cannot show notifications for this page."
        : "The browser blocked notifications for this page; allow them in the site settings to turn them on.",
      "error",
    );
  }
}

/** Shows a test notification, or says where to look when the browser did not show it. */
export async function testNotification(s: NotificationSwitch): Promise<void> {
  if (!(await s.alerts.test())) {
    s.toast("The browser did not show the notification; check its site settings for notifications.", "error");
  }
}
