import { type Client, Code, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TerminalStream } from "../../gen/staragent/v1/terminal_stream_pb.js";
import { expectCode } from "../../test/support/codes.js";
import { type ServerProcess, startServerProcess } from "../../test/support/servers.js";
import { TestViewer } from "../../test/support/test-viewer.js";
import { createTestTmux, type TestTmux } from "../../test/support/tmux.js";
import { waitFor } from "../../test/support/wait.js";
import { bearerInterceptor } from "../common/bearer.js";

const SHELL = ["env", "PS1=READY> ", "bash", "--norc", "--noprofile"];
const HUB_TOKEN = "hub-token-for-terminal-tests";
const NODE_TOKEN = "node-token-for-terminal-tests";

let hubTmux: TestTmux;
let nodeTmux: TestTmux;
let node: ServerProcess;
let hub: ServerProcess;
let tokenClient: Client<typeof TerminalStream>;
const viewers: TestViewer[] = [];

const bearer = bearerInterceptor;

async function shellSession(tmux: TestTmux, name: string): Promise<void> {
  await tmux.run("new-session", "-d", "-s", name, "-x", "80", "-y", "24", "--", ...SHELL);
  await waitFor(async () => (await tmux.run("capture-pane", "-p", "-t", `=${name}:`)).includes("READY>"), "the prompt");
}

beforeAll(async () => {
  hubTmux = createTestTmux();
  nodeTmux = createTestTmux();
  node = await startServerProcess({
    kind: "node",
    tmuxSocket: nodeTmux.socketName,
    token: NODE_TOKEN,
    args: ["--name", "far"],
  });
  hub = await startServerProcess({
    kind: "hub",
    tmuxSocket: hubTmux.socketName,
    token: HUB_TOKEN,
    args: ["--node", `far=${node.url}`],
    env: { STARAGENT_NODE_TOKEN: NODE_TOKEN },
  });
  tokenClient = createClient(
    TerminalStream,
    createGrpcTransport({ baseUrl: hub.url, interceptors: [bearer(HUB_TOKEN)] }),
  );
  await shellSession(hubTmux, "here");
  await shellSession(nodeTmux, "there");
});

afterAll(async () => {
  for (const v of viewers) v.close();
  await hub?.stop();
  await node?.stop();
  await hubTmux?.close();
  await nodeTmux?.close();
});

describe("the Hub's TerminalStream", () => {
  it("relays a local and a remote session's terminal, typing and output included", async () => {
    for (const [tmux, name] of [
      [hubTmux, "nodes/local/sessions/here"],
      [nodeTmux, "nodes/far/sessions/there"],
    ] as const) {
      const viewer = await TestViewer.attach(tokenClient, { name });
      viewers.push(viewer);
      await viewer.type("echo relayed-");
      await viewer.type("$((40+2))\r");
      await viewer.waitForOutput("relayed-42");
      const session = name.split("/").at(-1) as string;
      expect(await tmux.run("capture-pane", "-p", "-t", `=${session}:`)).toContain("\nrelayed-42");
      const resized = await tokenClient.resizeTerminal({ attachmentId: viewer.id, cols: 100, rows: 30 });
      expect(resized.sizeOwner).toBe(true);
      viewer.close();
    }
  });

  it("relays the nodes' errors unchanged", async () => {
    await expectCode(TestViewer.attach(tokenClient, { name: "nodes/far/sessions/missing" }), Code.NotFound);
    await expectCode(TestViewer.attach(tokenClient, { name: "nodes/local/sessions/missing" }), Code.NotFound);
    await expectCode(TestViewer.attach(tokenClient, { name: "nodes/nowhere/sessions/here" }), Code.NotFound);
    await expectCode(
      TestViewer.attach(tokenClient, { name: "nodes/far/sessions/there", cols: 5000 }),
      Code.InvalidArgument,
    );
  });

  it("lets only the caller that attached drive an attachment, browsers included", async () => {
    const login = await fetch(`${hub.url}/login`, {
      method: "POST",
      headers: { accept: "application/json" },
      body: new URLSearchParams({ token: HUB_TOKEN }),
      redirect: "manual",
    });
    const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0] as string;
    expect(cookie).toMatch(/=./);
    // The dashboard sends the login's key with the cookie.
    const { key } = (await login.json()) as { key: string };
    const browser = createClient(
      TerminalStream,
      createConnectTransport({
        baseUrl: hub.url,
        httpVersion: "1.1",
        interceptors: [
          (next) => (req) => {
            req.header.set("cookie", cookie);
            req.header.set("staragent-login-key", key);
            req.header.set("origin", hub.url);
            return next(req);
          },
        ],
      }),
    );
    // The browser's own attachment works over Connect on HTTP/1.1 (server streaming plus unary calls).
    const mine = await TestViewer.attach(browser, { name: "nodes/far/sessions/there" });
    viewers.push(mine);
    await mine.type("echo from-the-browser\r");
    await mine.waitForOutput("from-the-browser");
    // The token holder's attachment is not the browser's to drive, nor the other way round.
    const theirs = await TestViewer.attach(tokenClient, { name: "nodes/far/sessions/there" });
    viewers.push(theirs);
    await expectCode(
      browser.sendInput({ attachmentId: theirs.id, sequence: 1, data: Buffer.from("x") }),
      Code.NotFound,
    );
    await expectCode(tokenClient.resizeTerminal({ attachmentId: mine.id, cols: 90, rows: 20 }), Code.NotFound);
    mine.close();
    theirs.close();
  });

  it("ends the node's attachment when the viewer goes away", async () => {
    const viewer = await TestViewer.attach(tokenClient, { name: "nodes/far/sessions/there" });
    await waitFor(
      async () => (await nodeTmux.run("list-clients", "-t", "=there")).trim() !== "",
      "the node's tmux client",
    );
    viewer.close();
    await waitFor(
      async () => (await nodeTmux.run("list-clients", "-t", "=there")).trim() === "",
      "the node's tmux client to go",
    );
    await expectCode(tokenClient.ackOutput({ attachmentId: viewer.id, sequence: 1 }), Code.NotFound);
  });
});
