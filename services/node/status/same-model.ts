import { equals } from "@bufbuild/protobuf";
import { type Session, SessionSchema } from "../../../gen/staragent/v1/session_pb.js";

/** True when two models hold equal sessions under the same names. */
export function sameModel(a: ReadonlyMap<string, Session>, b: ReadonlyMap<string, Session>): boolean {
  if (a.size !== b.size) return false;
  for (const [name, session] of a) {
    const other = b.get(name);
    if (!other || (other !== session && !equals(SessionSchema, session, other))) return false;
  }
  return true;
}
