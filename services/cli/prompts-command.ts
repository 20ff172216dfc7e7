import { parseArgs } from "node:util";
import { create, toJson } from "@bufbuild/protobuf";
import { PendingPromptSchema, PromptEffect, type Session } from "../../gen/staragent/v1/session_pb.js";
import { connectHub } from "./client.js";
import type { Command } from "./command.js";
import { alignColumns, enumWord, sessionLabel } from "./format.js";
import { printable, promptSubject } from "./prompt-format.js";

/** Largest page asked for; the loop follows page tokens beyond it. */
const LIST_PAGE_SIZE = 1000;

/**
 * `staragent prompts [--json]`: every session on every node that waits on a prompt, with what it
 * asks about and its choices, so a script or a person can answer it with `staragent answer`.
 */
export const promptsCommand: Command = {
  run: async (args, config) => {
    const { values } = parseArgs({ args, options: { json: { type: "boolean" } } });
    const hub = await connectHub(config);
    const waiting: Session[] = [];
    const unreachable = new Set<string>();
    let pageToken = "";
    do {
      const res = await hub.sessions.listSessions({
        parent: "nodes/-",
        filter: "status=review",
        pageSize: LIST_PAGE_SIZE,
        pageToken,
      });
      waiting.push(...res.sessions.filter((s) => s.pendingPrompt !== undefined));
      for (const u of res.unreachable) unreachable.add(u);
      pageToken = res.nextPageToken;
    } while (pageToken !== "");
    if (values.json) {
      const prompts = waiting.map((s) => ({
        session: s.name,
        pendingPrompt: toJson(PendingPromptSchema, s.pendingPrompt ?? create(PendingPromptSchema)),
      }));
      process.stdout.write(`${JSON.stringify({ prompts, unreachable: [...unreachable] }, null, 2)}\n`);
      return 0;
    }
    if (waiting.length === 0) process.stdout.write("no pending prompts\n");
    else {
      const rows = [
        ["SESSION", "QUESTION", "ABOUT", "CHOICES"],
        ...waiting.map((s) => {
          const p = s.pendingPrompt;
          const choices =
            p?.choices.map((c) => `${c.id}=${enumWord(PromptEffect, c.effect)}`).join(" ") || "(not readable yet)";
          return [sessionLabel(s), printable(p?.question ?? ""), p ? promptSubject(p) : "", choices];
        }),
      ];
      process.stdout.write(`${alignColumns(rows)}\n`);
    }
    for (const u of unreachable) process.stderr.write(`warning: ${u} is unreachable; its prompts are not listed\n`);
    return 0;
  },
};
