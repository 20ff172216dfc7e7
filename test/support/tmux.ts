import { randomBytes } from "node:crypto";
import { TmuxClient } from "../../services/node/tmux/client.js";

/** A private tmux server for one test: its own `-L` socket, killed (only it) by `close`. */
export interface TestTmux {
  readonly socketName: string;
  readonly client: TmuxClient;
  /** Runs a tmux command on the private server. */
  run(...args: string[]): Promise<string>;
  /** Kills this test's server (never the user's default one). */
  close(): Promise<void>;
}

/** Starts nothing yet: the server starts with the first session a test creates. */
export function createTestTmux(env: NodeJS.ProcessEnv = process.env): TestTmux {
  const socketName = `sa-test-${process.pid}-${randomBytes(4).toString("hex")}`;
  const client = new TmuxClient({ socketName, env });
  return {
    socketName,
    client,
    run: (...args) => client.run(args),
    close: async () => {
      await client.run(["kill-server"]).catch(() => undefined);
    },
  };
}
