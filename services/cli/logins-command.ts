import { parseArgs } from "node:util";
import { toJson } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { type Login, LoginSchema, LoginService } from "../../gen/staragent/v1/login_service_pb.js";
import { bearerInterceptor } from "../common/bearer.js";
import type { EnvironmentConfig } from "../common/config.js";
import { readUserToken, UsageError } from "./client.js";
import type { Command } from "./command.js";
import { ago, alignColumns } from "./format.js";

const USAGE = [
  "usage: staragent logins ls [--json]",
  "       staragent logins revoke ID|--all",
  "The Hub's browser logins: list them, and end one (or all, if a login cookie may have been copied).",
].join("\n");

/**
 * `staragent logins ls|revoke`: the browser logins the Hub keeps (LoginService). Ending a login makes
 * its cookie and key worthless at once; a browser that used it shows the login page.
 */
export const loginsCommand: Command = {
  run: async (args, config) => {
    const [verb, ...rest] = args;
    if (verb === "ls" || verb === "list") return list(rest, config);
    if (verb === "revoke") return revoke(rest, config);
    throw new UsageError(USAGE);
  },
};

async function client(config: EnvironmentConfig) {
  const token = await readUserToken(config);
  return createClient(
    LoginService,
    createGrpcTransport({ baseUrl: config.hubUrl, interceptors: [bearerInterceptor(token)] }),
  );
}

async function list(args: string[], config: EnvironmentConfig): Promise<number> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { json: { type: "boolean" } } });
  if (positionals.length > 0) throw new UsageError(USAGE);
  const { logins } = await (await client(config)).listLogins({});
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ logins: logins.map((l) => toJson(LoginSchema, l)) }, null, 2)}\n`);
  } else if (logins.length === 0) {
    process.stdout.write("no browser logins\n");
  } else {
    process.stdout.write(`${loginTable(logins)}\n`);
  }
  return 0;
}

async function revoke(args: string[], config: EnvironmentConfig): Promise<number> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { all: { type: "boolean" } } });
  const [id] = positionals;
  if (positionals.length > 1 || (id === undefined) === !values.all) throw new UsageError(USAGE);
  const { revoked } = await (await client(config)).revokeLogins({ id: id ?? "", all: values.all === true });
  process.stdout.write(`ended ${revoked} login${revoked === 1 ? "" : "s"}\n`);
  return 0;
}

/** One line per login: id, from where, when it began and was last used, when it ends, the browser. */
export function loginTable(logins: readonly Login[], now = Date.now()): string {
  const when = (t: Login["createTime"]) => (t ? ago(timestampDate(t), now) : "-");
  return alignColumns([
    ["LOGIN", "FROM", "BEGAN", "LAST USED", "ENDS", "BROWSER"],
    ...logins.map((l) => [
      l.id,
      l.peer,
      when(l.createTime),
      when(l.lastUsedTime),
      l.expireTime ? timestampDate(l.expireTime).toISOString().slice(0, 16).replace("T", " ") : "-",
      l.userAgent,
    ]),
  ]);
}
