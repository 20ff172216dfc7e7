import { homedir } from "node:os";
import { join } from "node:path";

/** Settings both servers and the CLI take from the environment (read only in composition roots). */
export interface EnvironmentConfig {
  /** `$STARAGENT_HOME`, default `~/.staragent`: the `.staragent/` state folder. */
  readonly home: string;
  /** `$STARAGENT_TMUX_SOCKET`: a tmux `-L` socket name; undefined means tmux's default server. */
  readonly tmuxSocket: string | undefined;
  /** `$STARAGENT_AUTH_TOKEN`: the Hub's user token, when set instead of the generated file. */
  readonly authToken: string | undefined;
  /** `$STARAGENT_NODE_TOKEN`: the node token, when set instead of the generated file. */
  readonly nodeToken: string | undefined;
  /** `$STARAGENT_LOG_LEVEL`. */
  readonly logLevel: string | undefined;
  /** `$STARAGENT_URL`: the Hub the CLI talks to, default `http://127.0.0.1:8080`. */
  readonly hubUrl: string;
  /**
   * `$STARAGENT_ORIGINS`: further origins browsers reach the Hub by (`https://hub.example.com`,
   * comma or space separated), as given; the Hub parses them with `parseOrigins`.
   */
  readonly origins: string | undefined;
}

/** Default Hub port. */
export const DEFAULT_HUB_PORT = 8080;
/** Default Node port. */
export const DEFAULT_NODE_PORT = 8081;
/** Default bind address: loopback only; any other address is an explicit choice. */
export const DEFAULT_HOST = "127.0.0.1";

/** Reads the StarAgent variables from `env`. */
export function readEnvironment(env: NodeJS.ProcessEnv): EnvironmentConfig {
  const nonEmpty = (v: string | undefined) => (v === undefined || v === "" ? undefined : v);
  return {
    home: nonEmpty(env.STARAGENT_HOME) ?? join(env.HOME ?? homedir(), ".staragent"),
    tmuxSocket: nonEmpty(env.STARAGENT_TMUX_SOCKET),
    authToken: nonEmpty(env.STARAGENT_AUTH_TOKEN),
    nodeToken: nonEmpty(env.STARAGENT_NODE_TOKEN),
    logLevel: nonEmpty(env.STARAGENT_LOG_LEVEL),
    hubUrl: nonEmpty(env.STARAGENT_URL) ?? `http://${DEFAULT_HOST}:${DEFAULT_HUB_PORT}`,
    origins: nonEmpty(env.STARAGENT_ORIGINS),
  };
}

/** Variables holding tokens: never passed on to processes that do not need them (tmux, its panes). */
export const SECRET_VARIABLES = ["STARAGENT_AUTH_TOKEN", "STARAGENT_NODE_TOKEN"] as const;

/**
 * `env` without the StarAgent tokens. A tmux server takes the environment of the client that starts
 * it as every pane's: tmux must never get them, or every agent session would inherit the tokens.
 */
export function withoutSecrets(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out = { ...env };
  for (const name of SECRET_VARIABLES) delete out[name];
  return out;
}
