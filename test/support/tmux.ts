import { randomBytes } from "node:crypto";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { type TmuxArgument, TmuxClient } from "../../services/node/tmux/client.js";
import { forgetTmux, rememberTmux } from "./leftovers.js";

/** A private tmux server for one test: its own `-L` socket, killed (only it) by `close`. */
export interface TestTmux {
  readonly socketName: string;
  readonly client: TmuxClient;
  /** Runs a tmux command on the private server (NEXT_COMMAND between commands run in one invocation). */
  run(...args: TmuxArgument[]): Promise<string>;
  /** Kills this test's server (never the user's default one) and removes its socket file. */
  close(): Promise<void>;
}

/** Starts nothing yet: the server starts with the first session a test creates. */
export function createTestTmux(env: NodeJS.ProcessEnv = process.env): TestTmux {
  const socketName = `sa-test-${process.pid}-${randomBytes(4).toString("hex")}`;
  const client = new TmuxClient({ socketName, env });
  // Where tmux puts `-L` sockets; kill-server leaves the file behind, so close removes it.
  const socketPath = join(env.TMUX_TMPDIR || "/tmp", `tmux-${process.getuid?.() ?? 0}`, socketName);
  rememberTmux(socketName);
  return {
    socketName,
    client,
    run: (...args) => client.run(args),
    close: async () => {
      await client.run(["kill-server"]).catch(() => undefined);
      forgetTmux(socketName);
      await rm(socketPath, { force: true });
    },
  };
}
