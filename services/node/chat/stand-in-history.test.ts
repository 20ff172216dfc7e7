import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ChatMessage, ChatMessageSource, ChatRole, Cli } from "../../../gen/staragent/v1/session_pb.js";
import { type HubFixture, startHubFixture } from "../../../test/foundation/hub-fixture.js";
import { standIns } from "../../../test/support/agent-fixture-setup.js";
import { REPO_ROOT } from "../../../test/support/servers.js";
import { waitFor } from "../../../test/support/wait.js";
import { createBuiltInAgents } from "../agents/registry.js";

/** The stand-in CLIs (test/stand-ins) come first on the sessions' PATH. */
const STAND_INS = join(REPO_ROOT, "test/stand-ins");
const AGENTS = join(import.meta.dirname, "../agents");
/** Turns each stand-in runs: more than one small page holds, at tmux's default size. */
const TURNS = 4;
/** A page size that splits those turns over several pages. */
const SMALL_PAGE = 3;

/** Every module of the registry whose fixture setup names a stand-in. */
const STAND_IN_CLIS = await standIns(
  AGENTS,
  createBuiltInAgents().modules.map((m) => m.name),
);

const texts = (messages: readonly ChatMessage[], role: ChatRole) =>
  messages.filter((m) => m.role === role).map((m) => m.text);

describe.each(STAND_IN_CLIS.map((s) => [s.command, s] as const))(
  "chat of the %s stand-in through a real Hub",
  (cli, standIn) => {
    let f: HubFixture;
    const session = `chat-${cli}`;
    const name = `nodes/local/sessions/${session}`;
    const chat = (more: { before?: string; pageSize?: number } = {}) => f.sessions.getChat({ name, ...more });

    beforeAll(async () => {
      f = await startHubFixture();
      const home = join(f.dir, "home");
      const cwd = join(f.dir, "proj");
      await mkdir(home);
      await mkdir(cwd);
      const unset = standIn.unsetEnv.flatMap((v) => ["-u", v]).join(" ");
      await f.tmux.run(
        "new-session",
        "-d",
        "-s",
        session,
        "-x",
        "80",
        "-y",
        "24",
        "-c",
        cwd,
        "-e",
        `HOME=${home}`,
        `env ${unset} PATH=${STAND_INS}:${process.env.PATH ?? ""} ${cli}`,
      );
      await waitFor(async () => {
        const res = await f.sessions.getSession({ name });
        return res.session?.statusDetail !== undefined && res.session.statusDetail !== "";
      }, `the ${cli} stand-in seen by the Hub`);
    });

    afterAll(async () => {
      await f?.tmux.close();
      await f?.close();
    });

    it("sends each prompt (confirmed by the native log) and pages back through every prompt and answer once, in order", async () => {
      const prompts = Array.from({ length: TURNS }, (_, i) => `${cli} chat turn ${i + 1}`);
      for (const prompt of prompts) {
        const sent = await waitFor(async () => {
          const res = await f.sessions.sendChatMessage({ name, text: prompt }).catch(() => undefined);
          return res;
        }, `SendChatMessage to ${cli}`);
        expect(sent.confirmed, sent.confirmationDetail).toBe(true);
        await waitFor(
          async () => texts((await chat()).messages, ChatRole.ASSISTANT).includes(`Done: ${prompt}`),
          `the answer to ${prompt} in the chat`,
        );
      }
      const newest = await chat({ pageSize: SMALL_PAGE });
      const pages: ChatMessage[][] = [newest.messages];
      let token = newest.hasMore ? newest.olderPageToken : "";
      for (let read = 0; token !== "" && read < 100; read++) {
        const page = await chat({ pageSize: SMALL_PAGE, before: token });
        pages.unshift(page.messages);
        token = page.hasMore ? page.olderPageToken : "";
      }
      const messages = pages.flat();
      expect(newest.messages.length).toBeLessThan(messages.length);
      expect(newest.sourceDetail).toContain(standIn.stateWord);
      expect(texts(messages, ChatRole.USER)).toEqual(prompts);
      expect(texts(messages, ChatRole.ASSISTANT)).toEqual(prompts.map((p) => `Done: ${p}`));
      expect(messages.every((m) => m.source === ChatMessageSource.LOG)).toBe(true);
      // Each message names the CLI that wrote it, the session's own here.
      const own = (await f.sessions.getSession({ name })).session?.cli;
      expect(new Set(messages.map((m) => m.cli))).toEqual(new Set([own]));
      expect(own).not.toBe(Cli.SHELL);
      const ids = messages.map((m) => BigInt(m.id));
      expect(ids.every((id, i) => i === 0 || id > (ids[i - 1] ?? 0n))).toBe(true);
    });
  },
);
