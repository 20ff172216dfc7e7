/** Opens a link from the terminal only when it is http(s), in a new tab without access to this page. */
export function openSafeLink(
  uri: string,
  open: (url: string) => void = (url) => window.open(url, "_blank", "noopener,noreferrer"),
): void {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return;
  open(url.href);
}
