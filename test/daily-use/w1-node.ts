import { testToken } from "../foundation/hub-fixture.js";
import { type ServerProcess, startServerProcess } from "../support/servers.js";
import { createTestTmux, type TestTmux } from "../support/tmux.js";

/** A Node process named `w1` on its own tmux server, holding one session `on-w1`, not yet added to a Hub. */
export interface W1Node {
  readonly tmux: TestTmux;
  readonly server: ServerProcess;
  /** Its node token. */
  readonly token: string;
  close(): Promise<void>;
}

/** Starts the Node; on failure closes its tmux server. */
export async function startW1Node(): Promise<W1Node> {
  const tmux = createTestTmux();
  const token = testToken();
  try {
    await tmux.run("new-session", "-d", "-s", "on-w1", "sleep 600");
    const server = await startServerProcess({
      kind: "node",
      tmuxSocket: tmux.socketName,
      token,
      args: ["--name", "w1"],
    });
    return {
      tmux,
      server,
      token,
      close: async () => {
        await server.stop();
        await tmux.close();
      },
    };
  } catch (err) {
    await tmux.close();
    throw err;
  }
}
