import type { ITheme } from "@xterm/xterm";

/**
 * Terminal palettes for each dashboard theme. The light one darkens yellow, cyan and white, which are
 * unreadable on white in the usual palettes; xterm's minimumContrastRatio then fixes the rest.
 */
export const TERMINAL_THEMES: Record<"light" | "dark", ITheme> = {
  light: {
    background: "#ffffff",
    foreground: "#1a1d23",
    cursor: "#1a1d23",
    cursorAccent: "#ffffff",
    selectionBackground: "#b6cdf7",
    black: "#1a1d23",
    red: "#b42318",
    green: "#17753a",
    yellow: "#8a5a00",
    blue: "#1b5fcf",
    magenta: "#8e2fb5",
    cyan: "#0b6e7a",
    white: "#5f6673",
    brightBlack: "#555d6b",
    brightRed: "#d1342a",
    brightGreen: "#1f8f48",
    brightYellow: "#9c6b00",
    brightBlue: "#2a6fe8",
    brightMagenta: "#a33fcc",
    brightCyan: "#0e8291",
    brightWhite: "#2b2f36",
  },
  dark: {
    background: "#0d0f13",
    foreground: "#e5e8ee",
    cursor: "#e5e8ee",
    cursorAccent: "#0d0f13",
    selectionBackground: "#34496f",
    black: "#2b2f36",
    red: "#ff7b72",
    green: "#4cc26a",
    yellow: "#e3b341",
    blue: "#6cb2ff",
    magenta: "#d2a8ff",
    cyan: "#56d4dd",
    white: "#c9d1d9",
    brightBlack: "#6e7681",
    brightRed: "#ffa198",
    brightGreen: "#7ee787",
    brightYellow: "#f2cc60",
    brightBlue: "#a5d6ff",
    brightMagenta: "#e2c5ff",
    brightCyan: "#8ee9f0",
    brightWhite: "#ffffff",
  },
};

/** Contrast xterm enforces between text and its background (WCAG AA for normal text). */
export const MINIMUM_CONTRAST_RATIO = 4.5;
