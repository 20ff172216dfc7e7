import { html, nothing } from "lit";
import { property, state } from "lit/decorators.js";
import { isLocalPath } from "../../state/routes.js";
import { emit, LightElement } from "../base/light-element.js";

/**
 * The login form. It posts the token to the Hub's `/login`, which answers with an HttpOnly,
 * SameSite=Strict cookie; the token itself is never stored by the page. The Hub's printed login link
 * carries the token in the URL fragment (never sent to a server), which logs in at once. After login
 * the dashboard goes where the person was headed (`next`).
 */
export class SaLogin extends LightElement {
  /** Where to go after logging in (a path of this dashboard). */
  @property({ attribute: false }) next = "/";
  @state() private error = "";
  @state() private busy = false;

  override connectedCallback(): void {
    super.connectedCallback();
    const fragment = new URLSearchParams(location.hash.slice(1));
    const token = fragment.get("token");
    if (token) {
      history.replaceState(null, "", location.pathname + location.search);
      void this.login(token);
    }
  }

  protected override firstUpdated(): void {
    this.querySelector<HTMLInputElement>("#login-token")?.focus();
  }

  protected override render() {
    return html`<main class="login-page">
      <form class="login-card" @submit=${this.onSubmit} aria-describedby="login-hint">
        <div class="login-brand"><span class="brand-mark" aria-hidden="true">★</span> StarAgent</div>
        <h1>Log in</h1>
        ${this.error ? html`<p class="login-error" role="alert">${this.error}</p>` : nothing}
        <div class="field">
          <label for="login-token">Access token</label>
          <input
            id="login-token"
            name="token"
            type="password"
            autocomplete="current-password"
            spellcheck="false"
            autocapitalize="off"
            required
            ?disabled=${this.busy}
          />
        </div>
        <p id="login-hint" class="muted">
          The Hub printed a login link when it started. The token is also in
          <code>$STARAGENT_HOME/auth_token</code> (usually <code>~/.staragent/auth_token</code>).
        </p>
        <button class="primary" type="submit" ?disabled=${this.busy}>${this.busy ? "Logging in…" : "Log in"}</button>
      </form>
    </main>`;
  }

  private readonly onSubmit = (e: SubmitEvent) => {
    e.preventDefault();
    const input = this.querySelector<HTMLInputElement>("#login-token");
    const token = input?.value.trim() ?? "";
    if (token === "") {
      this.error = "Enter the access token.";
      return;
    }
    void this.login(token);
  };

  private async login(token: string): Promise<void> {
    this.busy = true;
    this.error = "";
    try {
      const res = await fetch("/login", {
        method: "POST",
        credentials: "same-origin",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ token }).toString(),
      });
      if (res.status === 429) {
        this.error = (await res.text()).trim() || "Too many failed attempts; wait a minute and try again.";
        return;
      }
      const landed = new URL(res.url || location.href);
      if (!res.ok || landed.searchParams.has("failed") || landed.pathname === "/login") {
        this.error = res.ok ? "That token was not accepted." : `The Hub refused the login (HTTP ${res.status}).`;
        return;
      }
      const input = this.querySelector<HTMLInputElement>("#login-token");
      if (input) input.value = "";
      emit(this, "sa-logged-in", isLocalPath(this.next) ? this.next : "/");
    } catch {
      this.error = "Cannot reach the StarAgent Hub. Check that it is running.";
    } finally {
      this.busy = false;
      if (this.error) {
        await this.updateComplete;
        this.querySelector<HTMLInputElement>("#login-token")?.focus();
      }
    }
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "sa-login": SaLogin;
  }
}
