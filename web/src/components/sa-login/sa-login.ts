import { html, nothing } from "lit";
import { property, state } from "lit/decorators.js";
import { setLoginKey } from "../../api/login-key.js";
import { isLocalPath } from "../../state/routes.js";
import { LightElement } from "../base/light-element.js";
import { fire } from "../events.js";

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

  /** A token from a login link that another site opened, until the person says whether to use it. */
  @state() private offered = "";

  override connectedCallback(): void {
    super.connectedCallback();
    window.addEventListener("hashchange", this.onHashChange);
    this.takeFragment(false);
  }

  override disconnectedCallback(): void {
    window.removeEventListener("hashchange", this.onHashChange);
    super.disconnectedCallback();
  }

  /** A login link opened in a tab already on this page changes only the fragment. */
  private readonly onHashChange = () => this.takeFragment(true);

  /**
   * Logs in with the `#token=` of a login link, at once when the person opened it, after asking when
   * another site may have: the Hub marks a login page reached from another site (`from=elsewhere`),
   * and a page that opened this tab (`window.opener`) can change its fragment.
   */
  private takeFragment(changed: boolean): void {
    const token = new URLSearchParams(location.hash.slice(1)).get("token");
    if (!token) return;
    history.replaceState(null, "", location.pathname + location.search);
    const elsewhere = new URLSearchParams(location.search).get("from") === "elsewhere";
    if (elsewhere || (changed && window.opener !== null)) {
      this.error = "";
      this.offered = token;
      return;
    }
    void this.login(token);
  }

  private readonly useOffered = () => {
    const token = this.offered;
    this.offered = "";
    void this.login(token);
  };

  protected override firstUpdated(): void {
    this.querySelector<HTMLInputElement>("#login-token")?.focus();
  }

  protected override render() {
    return html`<main class="login-page">
      <form class="login-card" @submit=${this.onSubmit} aria-describedby="login-hint">
        <div class="login-brand"><span class="brand-mark" aria-hidden="true">★</span> StarAgent</div>
        <h1>Log in</h1>
        ${this.error ? html`<p class="form-error login-error" role="alert">${this.error}</p>` : nothing}
        ${
          this.offered
            ? html`<div class="login-offer" role="alert">
              <p>Another site opened this login link with a token. Use it only if you opened the Hub's own link.</p>
              <button type="button" class="primary" @click=${this.useOffered}>Log in with the link's token</button>
              <button type="button" @click=${() => (this.offered = "")}>Do not log in</button>
            </div>`
            : nothing
        }
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
        headers: { accept: "application/json", "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ token }).toString(),
      });
      if (res.status === 429) {
        this.error = (await res.text()).trim() || "Too many failed attempts; wait a minute and try again.";
        return;
      }
      // A login answers with its key as JSON; a refused one is sent back to the login page.
      if (!res.ok || !(res.headers.get("content-type") ?? "").includes("application/json")) {
        this.error = res.ok ? "That token was not accepted." : `The Hub refused the login (HTTP ${res.status}).`;
        return;
      }
      setLoginKey(((await res.json()) as { key?: string }).key ?? "");
      const input = this.querySelector<HTMLInputElement>("#login-token");
      if (input) input.value = "";
      fire(this, "sa-logged-in", isLocalPath(this.next) ? this.next : "/");
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
