import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createContextValues, createHandlerContext } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AttachRequestSchema, TerminalStream } from "../../../gen/staragent/v1/terminal_stream_pb.js";
import { openPtyMasters, tmuxClients } from "../../../test/support/in-process-hub.js";
import { createTestTmux, type TestTmux } from "../../../test/support/tmux.js";
import { waitFor } from "../../../test/support/wait.js";
import { principalKey } from "../../common/context-keys.js";
import { createLogger } from "../../common/log.js";
import { AttachmentManager } from "./attachment-manager.js";
import { NodeTerminalService } from "./terminal-service.js";

let tmux: TestTmux;
let manager: AttachmentManager;
let service: NodeTerminalService;

beforeAll(async () => {
  tmux = createTestTmux();
  await tmux.run("new-session", "-d", "-s", "work", "-x", "80", "-y", "24", "sleep 600");
  const log = createLogger("test", "error", () => undefined);
  manager = new AttachmentManager({ tmux: tmux.client, log });
  service = new NodeTerminalService({ nodeName: "n1", manager, tmux: tmux.client, log });
});

afterAll(async () => {
  await manager?.close();
  await tmux?.close();
});

/** A handler context for `method` whose call ends when `abort` is called. */
function callContext(method: "attach" | "connect") {
  const caller = new AbortController();
  const ctx = createHandlerContext({
    service: TerminalStream,
    method: TerminalStream.method[method],
    protocolName: "grpc",
    requestMethod: "POST",
    url: `http://test/staragent.v1.TerminalStream/${method}`,
    requestSignal: caller.signal,
    contextValues: createContextValues().set(principalKey, { kind: "node", id: "node:test" }),
  });
  return { ctx, abort: () => caller.abort() };
}

describe("the Node's attach, called directly", () => {
  it("ends the attachment when the call ends, even if nobody runs the stream any further", async () => {
    const ptys = await openPtyMasters();
    const { ctx, abort } = callContext("attach");
    const stream = service.attach(
      create(AttachRequestSchema, { name: "nodes/n1/sessions/work", cols: 80, rows: 24 }),
      ctx,
    );
    const first = await stream.next();
    expect(first.value?.event.case).toBe("attached");
    expect([manager.count, await tmuxClients(tmux)]).toEqual([1, 1]);
    // The transport stops reading without ending the generator (it stays parked at its first yield).
    abort();
    await waitFor(async () => manager.count === 0 && (await tmuxClients(tmux)) === 0, "the attachment to end");
    expect(await openPtyMasters()).toBe(ptys);
  });

  it("attaches nothing for a caller that left while the attach was being prepared", async () => {
    const { ctx, abort } = callContext("attach");
    const stream = service.attach(
      create(AttachRequestSchema, { name: "nodes/n1/sessions/work", cols: 80, rows: 24 }),
      ctx,
    );
    const first = stream.next();
    abort();
    expect(await first.catch((e: unknown) => Code[ConnectError.from(e).code])).toBe("Canceled");
    await waitFor(async () => manager.count === 0 && (await tmuxClients(tmux)) === 0, "nothing to be attached");
  });
});
