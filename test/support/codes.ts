import { Code, ConnectError } from "@connectrpc/connect";
import { expect } from "vitest";

/**
 * Asserts that `call` fails with a ConnectError of `code` (compared by name, so a failure reads
 * "NotFound" rather than 5) and returns the error for assertions on its message.
 */
export async function expectCode(call: Promise<unknown>, code: Code): Promise<ConnectError> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, "the call succeeded but was expected to fail").toBeInstanceOf(ConnectError);
  expect(Code[(err as ConnectError).code]).toBe(Code[code]);
  return err as ConnectError;
}

/** The error `call` fails with, as a ConnectError; throws when it succeeds. */
export async function rejectionOf(call: Promise<unknown>): Promise<ConnectError> {
  try {
    await call;
  } catch (err) {
    return ConnectError.from(err);
  }
  throw new Error("the call succeeded but was expected to fail");
}

/** How `call` ends: "OK", or the name of its error's code: for a test that allows one of a few. */
export async function outcomeOf(call: Promise<unknown>): Promise<string> {
  try {
    await call;
    return "OK";
  } catch (err) {
    return Code[ConnectError.from(err).code];
  }
}
