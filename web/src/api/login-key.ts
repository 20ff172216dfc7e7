/**
 * Where the page keeps its login's key. localStorage is scoped to the page's origin (scheme, host and
 * port), unlike cookies, which the browser also hands to other ports of the same host: the Hub accepts
 * the login cookie only together with this key (header `staragent-login-key`), so a page on another
 * port that receives the cookie cannot use it. The Hub's placeholder login page uses the same name.
 */
const STORAGE_KEY = "staragent.login-key";

/** The header the Hub reads the key from (services/common/auth.ts, LOGIN_KEY_HEADER). */
export const LOGIN_KEY_HEADER = "staragent-login-key";

/** The login's key, or "" when this origin has none (never logged in here, or logged out). */
export function loginKey(): string {
  try {
    return localStorage.getItem(STORAGE_KEY) ?? "";
  } catch {
    return "";
  }
}

/** Keeps the key the Hub answered a login with; "" forgets it (logout). */
export function setLoginKey(key: string): void {
  try {
    if (key === "") localStorage.removeItem(STORAGE_KEY);
    else localStorage.setItem(STORAGE_KEY, key);
  } catch {
    // Storage refused (a private window's quota): calls then need a login each time the page loads.
  }
}
