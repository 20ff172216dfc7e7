import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { SessionSchema, SessionStatus, SessionType, StatusReason } from "../../../gen/staragent/v1/session_pb.js";
import { eachTempDir } from "../../../test/support/temp-dir.js";
import { createLogger } from "../../common/log.js";
import { CANCEL_WAIT_MS, MAX_QUEUED_PER_SESSION, MessageQueue } from "./message-queue.js";
import { queueBlocker } from "./queue-delivery.js";

const key = { tmuxSession: "fix-bug", sessionCreated: 1_700_000_000 };
const log = createLogger("test", "error");

describe("MessageQueue", () => {
  let home: string;
  eachTempDir("sa-queue-unit-", (made) => (home = made));

  it("keeps messages per session (name and creation time) in order, in a file that survives a reopen", async () => {
    const queue = new MessageQueue(home, log);
    const a = await queue.add(key, "first");
    const b = await queue.add(key, "second");
    await queue.add({ ...key, sessionCreated: key.sessionCreated + 1 }, "a later session of the same name");
    expect((await queue.list(key)).map((m) => m.text)).toEqual(["first", "second"]);
    expect(queue.count(key)).toBe(2);
    const reopened = new MessageQueue(home, log);
    expect((await reopened.list(key)).map((m) => [m.id, m.state])).toEqual([
      [a.id, "queued"],
      [b.id, "queued"],
    ]);
  });

  it("marks a message typing in the file before it is handed out; one left typing by a stop is never handed out again", async () => {
    const queue = new MessageQueue(home, log);
    const a = await queue.add(key, "first");
    await queue.add(key, "second");
    const taken = await queue.takeNext(key);
    expect(taken).toMatchObject({ id: a.id, state: "typing" });
    const file = JSON.parse(await readFile(join(home, "queued_messages.json"), "utf8")) as {
      messages: Array<{ id: string; state: string }>;
    };
    expect(file.messages.find((m) => m.id === a.id)?.state).toBe("typing");
    // The machine stops here. Reopened, the first is uncertain and only the second is handed out.
    const reopened = new MessageQueue(home, log);
    expect((await reopened.list(key)).map((m) => [m.text, m.state])).toEqual([
      ["first", "unsure"],
      ["second", "queued"],
    ]);
    expect((await reopened.takeNext(key))?.text).toBe("second");
    expect(await reopened.takeNext(key)).toBeUndefined();
  });

  it("refuses a cancel while typing, past the per-session limit, and of an unknown id, with the right codes", async () => {
    const queue = new MessageQueue(home, log);
    const a = await queue.add(key, "first");
    await queue.takeNext(key);
    const started = Date.now();
    await expect(queue.cancel(key, a.id)).rejects.toMatchObject({
      code: 9 /* FAILED_PRECONDITION */,
      rawMessage: expect.stringMatching(/is being typed now/),
    });
    // Refused by the wait's end, not at once.
    expect(Date.now() - started).toBeGreaterThanOrEqual(CANCEL_WAIT_MS);
    await queue.done(a.id);
    await expect(queue.cancel(key, a.id)).rejects.toMatchObject({ code: 5 /* NOT_FOUND */ });
    for (let i = 0; i < MAX_QUEUED_PER_SESSION; i++) await queue.add(key, `m${i}`);
    await expect(queue.add(key, "one too many")).rejects.toMatchObject({ code: 8 /* RESOURCE_EXHAUSTED */ });
    expect(queue.count(key)).toBe(MAX_QUEUED_PER_SESSION);
  });

  it("cancels a message whose typing was refused while the cancel waited, and says when it was typed instead", async () => {
    const queue = new MessageQueue(home, log);
    const a = await queue.add(key, "refused");
    await queue.takeNext(key);
    // The session's send lock found the session busy: the message waits again, and the cancel takes it.
    const cancelled = queue.cancel(key, a.id);
    // The delivery tries again at once, as it does on the next watch event: the waiting cancel keeps it.
    let retaken: unknown = "not tried";
    setTimeout(() => void queue.putBack(a.id).then(async () => (retaken = await queue.takeNext(key))), 100);
    await cancelled;
    expect(retaken).toBeUndefined();
    expect(await queue.list(key)).toEqual([]);
    const b = await queue.add(key, "typed");
    await queue.takeNext(key);
    const refused = queue.cancel(key, b.id);
    setTimeout(() => void queue.done(b.id), 100);
    await expect(refused).rejects.toMatchObject({
      code: 9 /* FAILED_PRECONDITION */,
      rawMessage: expect.stringMatching(/was typed meanwhile/),
    });
  });

  it("sets an unusable file aside and starts empty", async () => {
    await writeFile(join(home, "queued_messages.json"), "{ not json");
    const queue = new MessageQueue(home, log);
    expect(await queue.list(key)).toEqual([]);
    await queue.add(key, "after");
    expect((await new MessageQueue(home, log).list(key)).map((m) => m.text)).toEqual(["after"]);
  });
});

describe("queueBlocker", () => {
  const session = (status: SessionStatus, statusReason: StatusReason, type = SessionType.AGENT) =>
    create(SessionSchema, { status, statusReason, type });
  it("lets a message go only into an idle session or one in review for a finished turn", () => {
    const ready: Array<[SessionStatus, StatusReason]> = [
      [SessionStatus.IDLE, StatusReason.NO_TURN],
      [SessionStatus.IDLE, StatusReason.SEEN_COMPLETION],
      [SessionStatus.IDLE, StatusReason.INTERRUPTED],
      [SessionStatus.IDLE, StatusReason.SHELL_PROMPT],
      [SessionStatus.REVIEW, StatusReason.UNSEEN_COMPLETION],
    ];
    for (const [status, reason] of ready) expect(queueBlocker(session(status, reason))).toBeUndefined();
    const blocked: Array<[SessionStatus, StatusReason, string]> = [
      [SessionStatus.REVIEW, StatusReason.INPUT_PROMPT, "a prompt is waiting for an answer"],
      [SessionStatus.WORKING, StatusReason.ACTIVE_TURN, "a turn is running"],
      [SessionStatus.WORKING, StatusReason.COMMAND_RUNNING, "a turn is running"],
      [SessionStatus.IDLE, StatusReason.PROCESS_EXITED, "its program has exited"],
      [SessionStatus.IDLE, StatusReason.NOT_TRACKED, "its state is not known"],
    ];
    for (const [status, reason, why] of blocked) expect(queueBlocker(session(status, reason))).toBe(why);
    expect(queueBlocker(session(SessionStatus.IDLE, StatusReason.NO_TURN, SessionType.SYSTEM))).toBe(
      "it is a system session",
    );
  });
});
