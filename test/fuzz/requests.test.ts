import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SessionSchema } from "../../gen/staragent/v1/session_pb.js";
import { SessionService } from "../../gen/staragent/v1/session_service_pb.js";
import { TerminalStream } from "../../gen/staragent/v1/terminal_stream_pb.js";
import { paginate } from "../../services/common/pagination.js";
import { parseParent, parseSessionName, sessionResourceName } from "../../services/common/resource-names.js";
import { parseSessionFilter } from "../../services/common/session-filter.js";
import { BUILT_IN_FILTER_NAMES } from "../../services/node/agents/registry.js";
import { chatDelta, encodeCursor } from "../../services/node/chat/chat-cursor.js";
import { validateChatText } from "../../services/node/chat/chat-text.js";
import { MessageIds } from "../../services/node/chat/message-ids.js";
import { validateCommand, validateCwd, validateNewSessionId } from "../../services/node/create-session-input.js";
import {
  validateAttachmentId,
  validateHistoryLines,
  validateInput,
  validateSize,
} from "../../services/node/terminal/terminal-requests.js";
import { fuzz, mutateText, type Random } from "./fuzz.js";

/** Request values that are close to valid: real names and terms, mutated. */
const SEEDS = [
  "nodes/local/sessions/fix-bug",
  "nodes/-/sessions/a",
  "nodes/w-1",
  "nodes/-",
  "status=review cli=claude",
  "type=agent origin=created",
  "fix_bug-2",
  "/tmp",
  "",
];

function value(r: Random): string {
  return r.chance(0.7) ? mutateText(r, r.pick(SEEDS)) : r.text(300);
}

/** Runs `call`; returns "ok" or the Connect code it failed with. Anything but a ConnectError fails the case. */
async function outcome(call: () => unknown): Promise<"ok" | Code> {
  try {
    await call();
    return "ok";
  } catch (err) {
    if (!(err instanceof ConnectError)) throw err;
    return err.code;
  }
}

describe("fuzz: request messages", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "sa-fuzz-requests-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("name and parent parsers accept or answer INVALID_ARGUMENT, and what they accept round-trips", async () => {
    await fuzz("names", value, async (text) => {
      const parsed = await outcome(() => parseSessionName(text));
      expect(["ok", Code.InvalidArgument]).toContain(parsed);
      expect(
        parsed !== "ok" || sessionResourceName(parseSessionName(text).node, parseSessionName(text).session) === text,
      ).toBe(true);
      expect(["ok", Code.InvalidArgument]).toContain(await outcome(() => parseParent(text)));
      expect(["ok", Code.InvalidArgument]).toContain(await outcome(() => validateNewSessionId(text)));
    });
  });

  it("the filter parser accepts or answers INVALID_ARGUMENT, and its filters never throw", async () => {
    const session = create(SessionSchema, { name: "nodes/local/sessions/a", tmuxSession: "a" });
    await fuzz("filters", value, async (text) => {
      const result = await outcome(() => parseSessionFilter(text, BUILT_IN_FILTER_NAMES)(session));
      expect(["ok", Code.InvalidArgument]).toContain(result);
    });
  });

  it("page tokens and sizes: a page or INVALID_ARGUMENT", async () => {
    const items = Array.from({ length: 30 }, (_, i) => `s${i}`);
    await fuzz(
      "pagination",
      (r) => ({
        size: r.pick([0, 1, 2, 1000, 1001, -1, r.int(5000) - 100, 0.5, Number.NaN]),
        token: r.chance(0.5)
          ? Buffer.from(mutateText(r, JSON.stringify({ q: "", a: `s${r.int(30)}` }))).toString("base64url")
          : r.text(100),
      }),
      async ({ size, token }) => {
        const result = await outcome(() => paginate(items, (s) => s, size, token, ""));
        expect(["ok", Code.InvalidArgument]).toContain(result);
      },
    );
  });

  it("CreateSession's cwd, command and name checks: accepted or INVALID_ARGUMENT", async () => {
    await fuzz(
      "create session input",
      (r) => ({
        cwd: r.chance(0.3) ? join(dir, r.text(30)) : value(r),
        command: Array.from({ length: r.int(8) }, () => r.text(40)),
      }),
      async ({ cwd, command }) => {
        expect(["ok", Code.InvalidArgument]).toContain(await outcome(() => validateCwd(cwd)));
        expect(["ok", Code.InvalidArgument]).toContain(await outcome(() => validateCommand(command)));
      },
    );
  });

  it("terminal requests and chat text: accepted or INVALID_ARGUMENT", async () => {
    const odd = (r: Random) =>
      r.pick([0, 1, -1, 80, 10_000, 2 ** 31, 0.5, Number.NaN, Number.POSITIVE_INFINITY, r.int(1000)]);
    await fuzz(
      "terminal and chat requests",
      (r) => ({ a: odd(r), b: odd(r), data: r.bytes(20_000), id: r.text(300), text: r.text(20_000) }),
      async ({ a, b, data, id, text }) => {
        for (const result of [
          await outcome(() => validateSize(a, b)),
          await outcome(() => validateHistoryLines(a)),
          await outcome(() => validateInput(a, data)),
          await outcome(() => validateAttachmentId(id)),
          await outcome(() => validateChatText(text)),
        ]) {
          expect(["ok", Code.InvalidArgument]).toContain(result);
        }
      },
    );
  });

  it("GetChat cursors: a delta, a reset or INVALID_ARGUMENT, never a crash", async () => {
    const ids = new MessageIds();
    const chat = ids.number("fuzz", [
      { role: 1, text: "hello" },
      { role: 2, text: "hi" },
      { role: 1, text: "more" },
    ]);
    const real = encodeCursor(chat, 2000);
    const decoded = Buffer.from(real, "base64url").toString("utf8");
    await fuzz(
      "chat cursors",
      (r) =>
        r.chance(0.6)
          ? Buffer.from(mutateText(r, decoded)).toString("base64url")
          : r.chance(0.5)
            ? mutateText(r, real)
            : r.text(3000),
      async (cursor) => {
        expect(["ok", Code.InvalidArgument]).toContain(await outcome(() => chatDelta(chat, 2000, cursor)));
      },
    );
  });

  it("every request message of every RPC decodes from random bytes or fails with an Error", async () => {
    const methods = [...SessionService.methods, ...TerminalStream.methods];
    await fuzz(
      "binary requests",
      (r) => ({ method: r.int(methods.length), bytes: r.bytes(300) }),
      ({ method, bytes }) => {
        const schema = methods[method]?.input;
        if (!schema) throw new Error("no such method");
        let message: ReturnType<typeof fromBinary> | undefined;
        let failure: unknown;
        try {
          message = fromBinary(schema, bytes);
        } catch (err) {
          failure = err;
        }
        expect(failure === undefined || failure instanceof Error).toBe(true);
        // What decodes must encode again (a decoded message is never left half-built).
        expect(message === undefined || toBinary(schema, message) instanceof Uint8Array).toBe(true);
      },
    );
  });
});
