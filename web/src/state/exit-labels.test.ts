import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { SessionEndSchema } from "../../../gen/staragent/v1/session_pb.js";
import { exitLabel } from "./exit-labels.js";

describe("exitLabel", () => {
  it("says nothing while the command runs, its status once it exited, and names common signals", () => {
    expect(exitLabel({ exitStatus: undefined })).toBeUndefined();
    expect(exitLabel({ exitStatus: 0 })?.text).toBe("exited 0");
    expect(exitLabel({ exitStatus: 3 })).toEqual({
      text: "exited 3",
      title: "The command started in this session exited with status 3; its pane is now a shell in the same folder.",
    });
    expect(exitLabel({ exitStatus: 130 })?.text).toBe("ended by SIGINT");
    expect(exitLabel({ exitStatus: 140 })?.text).toBe("exited 140");
  });

  it("says a session ended, with its last process's status and last lines, and how to dismiss it", () => {
    const ended = create(SessionEndSchema, { exitStatus: 7, lastLines: ["last words"] });
    expect(exitLabel({ exitStatus: 0, ended })).toEqual({
      text: "ended",
      title:
        "This session has ended (its last process exited with status 7). Its last lines:\nlast words\nStop dismisses it.",
    });
  });
});
