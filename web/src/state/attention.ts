/**
 * Whether a person is looking at the page: it is shown (not a background tab or a minimised window)
 * and its window has the focus. Notifications are held back only then, for the session on screen.
 */
export function personIsLooking(): boolean {
  return document.visibilityState === "visible" && document.hasFocus();
}

/**
 * Whether the page can be seen at all. Marking a finished turn as seen needs only this: a dashboard
 * visible on a second screen is being watched even when another window has the focus.
 */
export function pageIsVisible(): boolean {
  return document.visibilityState === "visible";
}
