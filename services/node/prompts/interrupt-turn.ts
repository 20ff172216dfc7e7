import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { Cli, SessionStatus, SessionType } from "../../../gen/staragent/v1/session_pb.js";
import {
  type InterruptSessionResponse,
  InterruptSessionResponseSchema,
} from "../../../gen/staragent/v1/session_service_pb.js";
import { sleep } from "../../common/async-queue.js";
import type { Logger } from "../../common/log.js";
import type { AgentRegistry } from "../agents/registry.js";
import type { SessionLookup } from "../session-lookup.js";
import { readPaneScreen } from "../status/screen.js";
import type { TmuxClient } from "../tmux/client.js";

/** How long a CLI that asks for its interrupt keys again (opencode) may take to ask. */
export const INTERRUPT_CONFIRM_TIMEOUT_MS = 2_000;
/** Pause between screen reads while waiting for that question. */
const INTERRUPT_POLL_MS = 25;

/** What interrupting a turn works with. */
export interface InterruptTurnParts {
  readonly sessions: SessionLookup;
  readonly tmux: TmuxClient;
  readonly agents: AgentRegistry;
  readonly log: Logger;
}

/**
 * Interrupts a session's running turn with its CLI's own keys (AgentModule.interrupt), only while its
 * status is WORKING: a click on a stale page after the turn ended types nothing. A CLI that asks for
 * the keys again (opencode) gets them once its screen asks. The caller holds the session's input lock.
 */
export async function interruptTurn(
  parts: InterruptTurnParts,
  tmuxName: string,
  signal: AbortSignal,
): Promise<InterruptSessionResponse> {
  const session = await parts.sessions.getSession(tmuxName);
  if (session.type === SessionType.SYSTEM) {
    throw new ConnectError(`${tmuxName} is a StarAgent system session; nothing was typed`, Code.FailedPrecondition);
  }
  const module = parts.agents.get(session.cli);
  const interrupt = module?.interrupt;
  if (!interrupt) {
    throw new ConnectError(
      `${tmuxName} runs ${(Cli[session.cli] ?? "a program").toLowerCase()}, which StarAgent cannot interrupt; nothing was typed`,
      Code.FailedPrecondition,
    );
  }
  if (session.status !== SessionStatus.WORKING) {
    throw new ConnectError(`no turn is running in ${tmuxName} now; nothing was typed`, Code.FailedPrecondition);
  }
  const context = parts.sessions.sessionContext(tmuxName);
  if (!context) throw new ConnectError(`session ${session.name} not found`, Code.NotFound);
  if (signal.aborted) throw new ConnectError("the caller went away; nothing was typed", Code.Canceled);
  const paneId = context.pane.paneId;
  const typed = interrupt.keys.join(" ");
  await parts.tmux.run(["send-keys", "-t", paneId, ...interrupt.keys]);
  let detail = `typed ${typed}`;
  if (interrupt.confirm) {
    const deadline = Date.now() + INTERRUPT_CONFIRM_TIMEOUT_MS;
    for (;;) {
      if ((await readPaneScreen(parts.tmux, paneId)).includes(interrupt.confirm)) {
        await parts.tmux.run(["send-keys", "-t", paneId, ...interrupt.keys]);
        detail = `typed ${typed}, then ${typed} again when ${module.name} asked`;
        break;
      }
      if (Date.now() >= deadline || signal.aborted) {
        detail = `typed ${typed}; ${module.name} did not ask to confirm`;
        break;
      }
      await sleep(INTERRUPT_POLL_MS);
    }
  }
  parts.log.info("turn interrupted", { session: tmuxName, keys: typed });
  return create(InterruptSessionResponseSchema, { detail });
}
