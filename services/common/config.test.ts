import { describe, expect, it } from "vitest";
import { readEnvironment } from "./config.js";

describe("readEnvironment", () => {
  it("uses the defaults when nothing is set or values are empty", () => {
    const config = readEnvironment({ HOME: "/home/u", STARAGENT_AUTH_TOKEN: "", STARAGENT_TMUX_SOCKET: "" });
    expect(config).toEqual({
      home: "/home/u/.staragent",
      tmuxSocket: undefined,
      authToken: undefined,
      nodeToken: undefined,
      logLevel: undefined,
      hubUrl: "http://127.0.0.1:8080",
      origins: undefined,
    });
  });

  it("takes every StarAgent variable", () => {
    const config = readEnvironment({
      STARAGENT_HOME: "/srv/sa",
      STARAGENT_TMUX_SOCKET: "work",
      STARAGENT_AUTH_TOKEN: "u-token",
      STARAGENT_NODE_TOKEN: "n-token",
      STARAGENT_LOG_LEVEL: "debug",
      STARAGENT_URL: "http://hub:9000",
      STARAGENT_ORIGINS: "https://hub.example.com",
    });
    expect(config).toEqual({
      home: "/srv/sa",
      tmuxSocket: "work",
      authToken: "u-token",
      nodeToken: "n-token",
      logLevel: "debug",
      hubUrl: "http://hub:9000",
      origins: "https://hub.example.com",
    });
  });
});
