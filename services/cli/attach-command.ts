import { parseArgs } from "node:util";
import { create } from "@bufbuild/protobuf";
import { type ConnectRequest, ConnectRequestSchema } from "../../gen/staragent/v1/terminal_stream_pb.js";
import { AsyncQueue } from "../common/async-queue.js";
import { connectHub, sessionArgument, UsageError } from "./client.js";
import type { Command } from "./command.js";

/** The detach key: Ctrl-] (as telnet), which agents' TUIs do not use, unlike Ctrl-\ (SIGQUIT). */
const DETACH_BYTE = 0x1d;
/** Most bytes sent in one input message (the API's per-call limit). */
const MAX_INPUT_CHUNK_BYTES = 64 * 1024;
/** Acknowledge output every this many bytes written to the terminal (as VS Code does every 5 000). */
const ACK_EVERY_BYTES = 8 * 1024;
/** Size used when stdout is not a terminal. */
const FALLBACK_SIZE = { cols: 80, rows: 24 };

/**
 * `staragent attach NAME`: the session in this terminal over one bidi `Connect` stream to the Hub, a
 * scripted client of the same API the dashboard uses. Raw mode while attached, the window follows
 * this terminal's size (SIGWINCH) as the sizing policy allows, and Ctrl-] detaches.
 */
export const attachCommand: Command = {
  run: async (args, config) => {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: { "read-only": { type: "boolean", default: false }, "take-over": { type: "boolean", default: false } },
    });
    const arg = positionals[0];
    if (!arg || positionals.length > 1)
      throw new UsageError("usage: staragent attach NAME [--read-only] [--take-over]");
    const name = sessionArgument(arg);
    const hub = await connectHub(config);
    const stdin = process.stdin;
    const stdout = process.stdout;
    const size = () => (stdout.isTTY ? { cols: stdout.columns, rows: stdout.rows } : FALLBACK_SIZE);
    const requests = new AsyncQueue<ConnectRequest>();
    requests.push(
      create(ConnectRequestSchema, {
        message: {
          case: "attach",
          value: { name, ...size(), readOnly: values["read-only"], takeOver: values["take-over"] },
        },
      }),
    );
    let sequence = 0;
    let unacked = 0;
    let detached = false;
    const onInput = (chunk: Buffer) => {
      const at = chunk.indexOf(DETACH_BYTE);
      const data = at >= 0 ? chunk.subarray(0, at) : chunk;
      for (let i = 0; i < data.length && !values["read-only"]; i += MAX_INPUT_CHUNK_BYTES) {
        const value = { sequence: ++sequence, data: data.subarray(i, i + MAX_INPUT_CHUNK_BYTES) };
        requests.push(create(ConnectRequestSchema, { message: { case: "input", value } }));
      }
      if (at >= 0) {
        detached = true;
        requests.close();
      }
    };
    const onResize = () => {
      requests.push(create(ConnectRequestSchema, { message: { case: "resize", value: size() } }));
    };
    let exitReason = "";
    const wasRaw = stdin.isTTY ? stdin.isRaw : false;
    try {
      for await (const res of hub.terminal.connect(requests)) {
        if (res.message.case !== "event") continue;
        const event = res.message.value.event;
        if (event.case === "attached") {
          process.stderr.write(`staragent: attached to ${name}; press Ctrl-] to detach\r\n`);
          if (stdin.isTTY) stdin.setRawMode(true);
          stdin.on("data", onInput);
          stdin.resume();
          stdout.on("resize", onResize);
        } else if (event.case === "output") {
          const { sequence: seq, data } = event.value;
          await new Promise<void>((resolve) => stdout.write(data, () => resolve()));
          unacked += data.byteLength;
          if (unacked >= ACK_EVERY_BYTES) {
            unacked = 0;
            requests.push(create(ConnectRequestSchema, { message: { case: "ack", value: { sequence: seq } } }));
          }
        } else if (event.case === "exited") {
          exitReason = event.value.reason;
        }
      }
    } finally {
      stdin.off("data", onInput);
      stdout.off("resize", onResize);
      if (stdin.isTTY) stdin.setRawMode(wasRaw);
      stdin.pause();
      requests.close();
    }
    process.stderr.write(`\r\nstaragent: ${detached ? "detached" : exitReason || "the attachment ended"}\r\n`);
    return 0;
  },
};
