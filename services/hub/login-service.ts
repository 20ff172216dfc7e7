import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import { LoginSchema, type LoginService, type RevokeLoginsRequest } from "../../gen/staragent/v1/login_service_pb.js";
import { principalKey } from "../common/context-keys.js";
import type { LoginSessions } from "./login-sessions.js";

/** Principal ids of browser logins (services/common/auth.ts): `browser:<login id>`. */
const BROWSER_PRINCIPAL = "browser:";

/**
 * The Hub's LoginService: the browser logins it keeps, for `staragent logins ls|revoke`. A person
 * who suspects a copied cookie ends every login from the command line, with the user token.
 */
export class HubLoginService implements ServiceImpl<typeof LoginService> {
  constructor(private readonly logins: LoginSessions) {}

  listLogins(_req: unknown, ctx: HandlerContext) {
    const current = currentLogin(ctx);
    return {
      logins: this.logins.list().map((l) =>
        create(LoginSchema, {
          id: l.id,
          createTime: timestampFromMs(l.created),
          lastUsedTime: timestampFromMs(l.lastUsed),
          expireTime: timestampFromMs(l.expires),
          peer: l.peer,
          userAgent: l.userAgent,
          current: l.id === current,
        }),
      ),
    };
  }

  revokeLogins(req: RevokeLoginsRequest) {
    if ((req.id === "") === !req.all) {
      throw new ConnectError("give either a login id or all (to end every login)", Code.InvalidArgument);
    }
    if (req.all) return { revoked: this.logins.revokeAll() };
    if (!this.logins.revoke(req.id)) {
      throw new ConnectError(
        `there is no live login ${JSON.stringify(req.id.slice(0, 40))}; 'staragent logins ls' lists them`,
        Code.NotFound,
      );
    }
    return { revoked: 1 };
  }
}

function currentLogin(ctx: HandlerContext): string {
  const { id } = ctx.values.get(principalKey);
  return id.startsWith(BROWSER_PRINCIPAL) ? id.slice(BROWSER_PRINCIPAL.length) : "";
}
