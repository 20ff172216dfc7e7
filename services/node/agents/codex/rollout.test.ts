import { describe, expect, it } from "vitest";
import type { JsonRecord } from "../log-follower.js";
import { type CodexTurnState, codexRolloutReducer } from "./rollout.js";

const TURN = "01a23430-6ecc-7503-afc6-3b87db999801";

/** A user prompt as Codex 0.171.0 records it: a user `response_item`, then an `item_completed` UserMessage. */
function userPrompt(id: string, text: string): JsonRecord[] {
  return [
    { type: "response_item", payload: { type: "message", role: "user", content: [{ type: "input_text", text }] } },
    {
      type: "event_msg",
      payload: {
        type: "item_completed",
        turn_id: TURN,
        item: { type: "UserMessage", id, content: [{ type: "text", text }] },
      },
    },
  ];
}

/** The records Codex 0.171.0 wrote for a prompt and a follow-up typed while it worked (trimmed). */
const STEERED: JsonRecord[] = [
  { type: "event_msg", payload: { type: "task_started", turn_id: TURN } },
  ...userPrompt("01a23430-6f37-7121-a6ea-708fb5a9d20a", "first prompt"),
  ...userPrompt("01a23430-7771-72c1-8cc4-988f2be65655", "steer follow-up text"),
  { type: "event_msg", payload: { type: "task_complete", turn_id: TURN, last_agent_message: "second answer done" } },
];

function reduce(records: readonly JsonRecord[]): CodexTurnState[] {
  const states: CodexTurnState[] = [];
  let state = codexRolloutReducer.initial();
  for (const r of records) {
    state = codexRolloutReducer.apply(state, r);
    states.push(state);
  }
  return states;
}

describe("codexRolloutReducer: a follow-up Codex steers into the running turn", () => {
  it("gives the follow-up a user-turn identity of its own, marked as joined, in the same turn", () => {
    const states = reduce(STEERED);
    const first = states[2] as CodexTurnState;
    const steered = states[4] as CodexTurnState;
    expect(first).toMatchObject({
      turn: "active",
      lastUserTurn: TURN,
      lastUserTurnJoined: false,
      prompt: "first prompt",
    });
    expect(steered).toMatchObject({
      turn: "active",
      turnId: TURN,
      lastUserTurn: `${TURN}:01a23430-7771-72c1-8cc4-988f2be65655`,
      lastUserTurnJoined: true,
      prompt: "steer follow-up text",
    });
    expect(states[5]).toMatchObject({ turn: "completed", completionId: TURN, lastUserTurnJoined: true });
  });

  it("keeps one identity per turn for a prompt that opens a turn, whatever came before", () => {
    const next = "01a23431-0000-7000-8000-000000000002";
    const states = reduce([
      ...STEERED,
      { type: "event_msg", payload: { type: "task_started", turn_id: next } },
      {
        type: "event_msg",
        payload: { type: "item_completed", turn_id: next, item: { type: "UserMessage", id: "x", content: [] } },
      },
    ]);
    expect(states.at(-1)).toMatchObject({ lastUserTurn: next, lastUserTurnJoined: false });
  });
});
