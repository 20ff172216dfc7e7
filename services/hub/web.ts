import { LOGIN_KEY_HEADER } from "../common/auth.js";
import type { FailureSlowdown } from "../common/failure-slowdown.js";
import type { Logger } from "../common/log.js";
import type { OwnOrigins } from "../common/own-origins.js";
import type { FallbackHandler } from "../common/server.js";
import { secretsEqual } from "../common/tokens.js";
import {
  LOGIN_IDLE_MS,
  type LoginSessions,
  parseCookies,
  SECURE_SESSION_COOKIE,
  SESSION_COOKIE,
} from "./login-sessions.js";
import { createStaticSite } from "./static-site.js";

/** Where the placeholder pages keep the login's key (the dashboard uses the same name). */
const LOGIN_KEY_STORAGE = "staragent.login-key";
/** Largest login form accepted. */
const MAX_LOGIN_BODY_BYTES = 4096;

const SECURITY_HEADERS = {
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "content-security-policy":
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'",
};

/** What the web handler serves. */
export interface WebOptions {
  /** The built dashboard (`web/dist`); when it does not exist, a placeholder page is served. */
  readonly distDir: string;
  readonly token: string;
  readonly sessions: LoginSessions;
  /** Shared with the RPC interceptor: failed logins wait like failed calls. */
  readonly slowdown: FailureSlowdown;
  /** The Hub's own origins and names, shared with the RPC interceptor. */
  readonly origins: OwnOrigins;
  readonly log: Logger;
  /**
   * True when the Hub itself serves HTTPS: its cookies are then `Secure` (never sent over cleartext).
   * Behind a TLS proxy (`tailscale serve`), cookies are `Secure` when the login page's origin is https.
   */
  readonly secureCookies?: boolean;
}

/** `Sec-Fetch-Site` values of requests a page of this origin (or the user, typing) made. */
const OWN_FETCH_SITES = new Set(["same-origin", "none"]);

/**
 * Serves everything on the Hub's port that is not an RPC: the login page (which exchanges the token
 * for an HttpOnly, SameSite=Strict cookie), logout, and the dashboard's static files. Every request
 * must name one of the Hub's own hosts (a page that resolved its own name to the Hub, DNS
 * rebinding, is refused), and a login or logout must come from the Hub's own origin: a page elsewhere
 * can neither guess tokens through the browser nor log the user out. Failed logins wait as the
 * shared slowdown says; the right token never waits.
 */
export function createWebHandler(options: WebOptions): FallbackHandler {
  const site = createStaticSite(options.distDir);
  return (req, res) => {
    const send = (status: number, body: string | Buffer, headers: Record<string, string> = {}) => {
      res.writeHead(status, { ...SECURITY_HEADERS, "cache-control": "no-store", ...headers });
      res.end(body);
    };
    const url = new URL(req.url ?? "/", "http://hub");
    const method = req.method ?? "GET";
    // Browsers name the page's origin on every POST: an https page (the Hub's TLS, or a TLS proxy in
    // front of it) gets a cookie that is never sent over cleartext.
    // Secure cookies take the `__Host-` name, which the browser keeps to this host name and path.
    const secure = options.secureCookies === true || headerText(req.headers.origin).startsWith("https://");
    const cookieName = secure ? SECURE_SESSION_COOKIE : SESSION_COOKIE;
    const cookieAttributes = `HttpOnly; SameSite=Strict; Path=/${secure ? "; Secure" : ""}`;
    const loginCookie = (value: string) =>
      `${cookieName}=${value}; ${cookieAttributes}; Max-Age=${Math.floor(LOGIN_IDLE_MS / 1000)}`;
    void (async () => {
      const host = headerText(req.headers.host ?? req.headers[":authority"]);
      if (!options.origins.isOwnHost(host)) {
        options.log.warn("refused a request for another host name", { host: host.slice(0, 100) });
        return send(
          421,
          `This Hub does not answer to the name ${JSON.stringify(host.slice(0, 100))}; ${options.origins.hint}.\n`,
          {
            "content-type": "text/plain; charset=utf-8",
          },
        );
      }
      if ((url.pathname === "/login" || url.pathname === "/logout") && method === "POST" && !fromOwnPage()) {
        options.log.warn("refused a login or logout from another origin", {
          origin: headerText(req.headers.origin).slice(0, 100),
        });
        return send(403, "Logins and logouts are accepted only from this Hub's own pages.\n", {
          "content-type": "text/plain; charset=utf-8",
        });
      }
      if (url.pathname === "/login" && method === "POST") return login();
      if (url.pathname === "/login" && (method === "GET" || method === "HEAD") && fromOtherSite()) {
        // The page then asks before it logs in with a `#token=` from the link (the fragment stays).
        url.searchParams.set("from", "elsewhere");
        return send(303, "", { location: `${url.pathname}${url.search}` });
      }
      if (url.pathname === "/login") {
        // The built dashboard has its own login view; the page below serves until it is built.
        if (method === "GET" || method === "HEAD") {
          if (await site.serve(req, res, "/login")) return;
        }
        return send(200, LOGIN_PAGE, { "content-type": "text/html; charset=utf-8" });
      }
      if (url.pathname === "/login.js")
        return send(200, LOGIN_SCRIPT, { "content-type": "text/javascript; charset=utf-8" });
      if (url.pathname === "/logout" && method === "POST") {
        // The login ends on the Hub: a copy of the cookie (and key) is worth nothing afterwards.
        const id = options.sessions.cookieLogin(headerText(req.headers.cookie));
        if (id !== undefined) {
          options.sessions.revoke(id);
          options.log.info("browser logout", { login: id });
        }
        return send(303, "", { location: "/login", "set-cookie": `${cookieName}=; ${cookieAttributes}; Max-Age=0` });
      }
      if (method !== "GET" && method !== "HEAD")
        return send(405, "method not allowed\n", { "content-type": "text/plain" });
      return serveStatic(url.pathname);
    })().catch((err) => {
      options.log.error("web request failed", {
        path: url.pathname,
        error: err instanceof Error ? err.message : String(err),
      });
      if (!res.headersSent) send(500, "internal error\n", { "content-type": "text/plain" });
    });

    /**
     * True when the request comes from one of the Hub's own pages: its `Origin` is one of the Hub's
     * (browsers send it with every POST), or it has none and says it was not made by another site
     * (a script, curl, or a browser typing the address).
     */
    function fromOwnPage(): boolean {
      const origin = req.headers.origin;
      if (origin !== undefined) return options.origins.isOwnOrigin(headerText(origin));
      const site = req.headers["sec-fetch-site"];
      return site === undefined || OWN_FETCH_SITES.has(headerText(site));
    }

    /** True for a navigation another site (another port of this host too) made, not yet marked so. */
    function fromOtherSite(): boolean {
      const site = headerText(req.headers["sec-fetch-site"]);
      return site !== "" && !OWN_FETCH_SITES.has(site) && url.searchParams.get("from") !== "elsewhere";
    }

    async function login() {
      const peer = req.socket?.remoteAddress ?? "unknown";
      const body = await readBody(req, MAX_LOGIN_BODY_BYTES);
      const token = body === undefined ? "" : (new URLSearchParams(body).get("token") ?? "").trim();
      if (token === "" || !secretsEqual(token, options.token)) {
        const gone = new AbortController();
        res.once("close", () => gone.abort());
        const { count: failures, overflow } = await options.slowdown.failed(peer, gone.signal);
        if ((failures & (failures - 1)) === 0) options.log.warn("browser login failed", { peer, failures });
        if (overflow) {
          return send(429, "Too many failed logins are waiting; try again in a minute.\n", {
            "content-type": "text/plain; charset=utf-8",
            connection: "close",
          });
        }
        return send(303, "", { location: "/login?failed=1" });
      }
      const issued = options.sessions.issue(peer, headerText(req.headers["user-agent"]));
      options.log.info("browser login", { peer, login: issued.id });
      // The page asks for JSON to receive the login's key, which it keeps in its origin's storage and
      // sends on every call (LOGIN_KEY_HEADER); a plain form post gets the cookie alone.
      if (headerText(req.headers.accept).includes("application/json")) {
        return send(200, JSON.stringify({ login: issued.id, key: issued.key }), {
          "content-type": "application/json",
          "set-cookie": loginCookie(issued.cookie),
        });
      }
      return send(303, "", { location: "/", "set-cookie": loginCookie(issued.cookie) });
    }

    async function serveStatic(pathname: string) {
      const cookie = headerText(req.headers.cookie);
      const loggedIn = options.sessions.cookieLogin(cookie) !== undefined;
      const page = pathname === "/" || pathname === "/index.html";
      if (!loggedIn && page) return send(303, "", { location: "/login" });
      // Loading the dashboard renews the cookie's lifetime (the Hub renews the login on every call).
      const value = parseCookies(cookie).get(cookieName);
      if (page && value) res.setHeader("set-cookie", loginCookie(value));
      if (await site.serve(req, res, pathname)) return;
      if (!(await site.available())) {
        if (pathname === "/" || pathname === "/index.html") {
          return send(200, PLACEHOLDER_PAGE, { "content-type": "text/html; charset=utf-8" });
        }
        if (pathname === "/placeholder.js")
          return send(200, PLACEHOLDER_SCRIPT, { "content-type": "text/javascript; charset=utf-8" });
      }
      return send(404, "not found\n", { "content-type": "text/plain" });
    }
  };
}

function headerText(value: string | string[] | undefined): string {
  return Array.isArray(value) ? value.join("; ") : (value ?? "");
}

async function readBody(req: AsyncIterable<Buffer | string>, limit: number): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req) {
      const buf = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
      size += buf.length;
      if (size > limit) return undefined;
      chunks.push(buf);
    }
  } catch {
    return undefined;
  }
  return Buffer.concat(chunks).toString("utf8");
}

const LOGIN_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>StarAgent · log in</title>
<style>
body{font:15px/1.5 system-ui,sans-serif;background:#0f1115;color:#e6e6e6;display:grid;place-items:center;min-height:100vh;margin:0}
form{background:#181b22;padding:2rem;border-radius:10px;width:min(26rem,90vw);box-shadow:0 4px 24px #0006}
h1{font-size:1.3rem;margin:0 0 1rem}input{width:100%;box-sizing:border-box;padding:.6rem;border-radius:6px;border:1px solid #333;background:#0f1115;color:inherit;font-family:monospace}
button{margin-top:1rem;padding:.6rem 1.2rem;border:0;border-radius:6px;background:#4c7dff;color:#fff;font-weight:600;cursor:pointer}
.hint{color:#9aa0aa;font-size:.85rem}.error{color:#ff7b72}
</style></head>
<body><form method="post" action="/login" id="login">
<h1>StarAgent</h1>
<p class="error" id="failed" hidden>That token was not accepted.</p>
<label for="token">Access token</label>
<input id="token" name="token" type="password" autocomplete="current-password" required autofocus>
<p class="hint">The Hub printed a login link when it started; the token is also in <code>$STARAGENT_HOME/auth_token</code>.</p>
<button type="submit">Log in</button>
</form><script src="/login.js"></script></body></html>
`;

/**
 * Logs in with the form's token (or the login link's `#token=` fragment, never sent to the server in
 * a URL), keeps the login's key in this origin's storage (the dashboard's `web/src/api/login-key.ts`
 * uses the same name) and opens the page.
 */
const LOGIN_SCRIPT = `(() => {
  const form = document.getElementById("login");
  const failed = document.getElementById("failed");
  async function login(token) {
    failed.hidden = true;
    const res = await fetch("/login", { method: "POST", headers: { accept: "application/json", "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams({ token }).toString() });
    if (!res.ok || !(res.headers.get("content-type") || "").includes("json")) { failed.hidden = false; return; }
    localStorage.setItem("${LOGIN_KEY_STORAGE}", (await res.json()).key);
    location.assign("/");
  }
  form.addEventListener("submit", (e) => { e.preventDefault(); void login(document.getElementById("token").value.trim()); });
  const token = new URLSearchParams(location.hash.slice(1)).get("token");
  const elsewhere = new URLSearchParams(location.search).get("from") === "elsewhere";
  if (token) {
    history.replaceState(null, "", location.pathname + location.search);
    if (!elsewhere || confirm("Another site opened this login link with a token. Log in with it?")) void login(token);
  }
})();
`;

const PLACEHOLDER_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>StarAgent Hub</title>
<style>body{font:15px/1.5 system-ui,sans-serif;background:#0f1115;color:#e6e6e6;margin:2rem}table{border-collapse:collapse}td,th{padding:.3rem .8rem;border-bottom:1px solid #2a2f3a;text-align:left}</style>
</head><body><h1>StarAgent Hub</h1>
<p>The dashboard has not been built (<code>make build</code>). Sessions on this Hub:</p>
<table><thead><tr><th>session</th><th>status</th><th>cli</th><th>cwd</th></tr></thead><tbody id="sessions"></tbody></table>
<p id="error"></p>
<form method="post" action="/logout"><button>Log out</button></form>
<script src="/placeholder.js"></script></body></html>
`;

/** Lists sessions with a Connect JSON call, authenticated by the login cookie. */
const PLACEHOLDER_SCRIPT = `(async () => {
  const res = await fetch("/staragent.v1.SessionService/ListSessions", {
    method: "POST", body: "{}",
    headers: { "content-type": "application/json", "connect-protocol-version": "1", "${LOGIN_KEY_HEADER}": localStorage.getItem("${LOGIN_KEY_STORAGE}") || "" },
  });
  const body = await res.json();
  if (!res.ok) { document.getElementById("error").textContent = body.message || res.statusText; return; }
  const rows = document.getElementById("sessions");
  for (const s of body.sessions || []) {
    const tr = document.createElement("tr");
    for (const v of [s.name, (s.status || "").replace("SESSION_STATUS_", "").toLowerCase(), (s.cli || "").replace("CLI_", "").toLowerCase(), s.cwd]) {
      const td = document.createElement("td"); td.textContent = v || ""; tr.append(td);
    }
    rows.append(tr);
  }
})();
`;
