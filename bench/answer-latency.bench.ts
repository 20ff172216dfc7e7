import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, readFile, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Client, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { PromptEffect, SessionStatus, StatusReason } from "../gen/staragent/v1/session_pb.js";
import { SessionService } from "../gen/staragent/v1/session_service_pb.js";
import { bearerInterceptor } from "../services/common/bearer.js";
import { REPO_ROOT, type ServerProcess, startServerProcess } from "../test/support/servers.js";
import { createTestTmux, type TestTmux } from "../test/support/tmux.js";
import { waitFor } from "../test/support/wait.js";
import { percentile } from "./terminal.bench.js";

/** Answers timed per path (local machine, remote Node), each on a fresh approval prompt. */
const SAMPLES = 30;
/** How often the pane is looked at for the prompt to be gone (tmux capture-pane; the timer's grain). */
const SCREEN_POLL_MS = 5;
/** The question the claude stand-in's approval shows. */
const QUESTION = "Do you want to proceed?";

/**
 * Time from an AnswerPrompt call leaving a real gRPC client of a real Hub to the prompt gone from the
 * pane (the pane polled with tmux every 5 ms from the benchmark), for a claude stand-in on the Hub's
 * own machine and on a remote Node process. Each sample is a fresh `approve` turn, answered "Yes".
 * Also prints the call's own round trip (it returns once the owning machine saw the prompt go).
 * Goal: p95 under 500 ms local, under 800 ms through a remote Node.
 */
export async function run(): Promise<void> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), "sa-bench-answer-")));
  const started: { server: ServerProcess; tmux: TestTmux }[] = [];
  try {
    await Promise.all(["hub", "n1", "project"].map((d) => mkdir(join(dir, d))));
    const env = (home: string): NodeJS.ProcessEnv => ({
      ...process.env,
      HOME: home,
      PATH: `${join(REPO_ROOT, "test/stand-ins")}:${process.env.PATH}`,
      STANDIN_THINK_MS: "20",
      STANDIN_TURN_MS: "50",
      CLAUDE_CONFIG_DIR: "",
    });
    const nodeToken = randomBytes(24).toString("base64url");
    const nodeTmux = createTestTmux(env(join(dir, "n1")));
    const node = await startServerProcess({
      kind: "node",
      tmuxSocket: nodeTmux.socketName,
      token: nodeToken,
      args: ["--name", "n1"],
      env: env(join(dir, "n1")),
    });
    started.push({ server: node, tmux: nodeTmux });
    const hubTmux = createTestTmux(env(join(dir, "hub")));
    const hub = await startServerProcess({
      kind: "hub",
      tmuxSocket: hubTmux.socketName,
      token: randomBytes(24).toString("base64url"),
      args: ["--node", `n1=${node.url}`],
      env: { ...env(join(dir, "hub")), STARAGENT_NODE_TOKEN: nodeToken },
    });
    started.push({ server: hub, tmux: hubTmux });
    const client = createClient(
      SessionService,
      createGrpcTransport({
        baseUrl: hub.url,
        interceptors: [bearerInterceptor(hub.token)],
        nodeOptions: { noDelay: true } as Record<string, unknown>,
      }),
    );
    console.log("path                  AnswerPrompt → prompt gone   p50 ms   p95 ms   max ms   call p50   call p95");
    for (const [label, nodeName, tmux] of [
      ["local (Hub's machine)", "local", hubTmux],
      ["remote Node", "n1", nodeTmux],
    ] as const) {
      const { gone, calls } = await timeAnswers(client, nodeName, tmux, join(dir, "project"));
      const row = (xs: number[]) => [percentile(xs, 50), percentile(xs, 95)].map((x) => x.toFixed(1).padStart(8));
      console.log(
        `${label.padEnd(22)}${" ".repeat(28)}${row(gone).join(" ")} ${(gone[gone.length - 1] ?? Number.NaN).toFixed(1).padStart(8)} ${row(calls).join("  ")}`,
      );
    }
    console.log(`load average: ${(await readFile("/proc/loadavg", "utf8")).trim()}`);
  } finally {
    for (const s of started.reverse()) {
      await s.server.stop();
      await s.tmux.close();
    }
    await rm(dir, { recursive: true, force: true });
  }
}

/** SAMPLES answers on one node; sorted times to the prompt gone from the pane and of the call. */
async function timeAnswers(
  client: Client<typeof SessionService>,
  node: string,
  tmux: TestTmux,
  cwd: string,
): Promise<{ gone: number[]; calls: number[] }> {
  const id = "bench-answer";
  const name = `nodes/${node}/sessions/${id}`;
  await client.createSession({ parent: `nodes/${node}`, sessionId: id, cwd, command: ["claude"] });
  await waitFor(async () => (await client.getSession({ name })).session?.statusReason === StatusReason.NO_TURN, "idle");
  const gone: number[] = [];
  const calls: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    await client.sendChatMessage({ name, text: `approve ${i}` });
    const prompt = await waitFor(
      async () => {
        const p = (await client.getSession({ name })).session?.pendingPrompt;
        return p && p.choices.length > 0 && p;
      },
      "the approval",
      15_000,
      10,
    );
    const yes = prompt.choices.find((c) => c.effect === PromptEffect.ALLOW_ONCE);
    const sent = performance.now();
    const call = client.answerPrompt({ name, fingerprint: prompt.fingerprint, choiceId: yes?.id ?? "" });
    const screen = (async () => {
      while ((await tmux.run("capture-pane", "-p", "-t", `=${id}:`)).includes(QUESTION)) {
        await new Promise((r) => setTimeout(r, SCREEN_POLL_MS));
      }
      return performance.now();
    })();
    await call;
    calls.push(performance.now() - sent);
    gone.push((await screen) - sent);
    await waitFor(
      async () => (await client.getSession({ name })).session?.statusReason !== StatusReason.INPUT_PROMPT,
      "answered",
      15_000,
      10,
    );
    await waitFor(
      async () => (await client.getSession({ name })).session?.status !== SessionStatus.WORKING,
      "turn done",
      15_000,
      10,
    );
  }
  await client.stopSession({ name, force: true });
  return { gone: gone.sort((a, b) => a - b), calls: calls.sort((a, b) => a - b) };
}
