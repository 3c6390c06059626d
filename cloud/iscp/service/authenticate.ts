// Decides an iSCP ConnectRequest: the in-band access token is a one-time ticket, one of our JWTs or a user's API
// token (as aptpod's SDK lessons send it); the subject must be allowed in the requested project; the node_id must
// be the subject's own (node-ids.ts). Refusals use iSCP result codes iscp-ts knows (AUTH_FAILED, NODE_ID_MISMATCH).
import type { Principal } from "../../auth/principal.js";
import { apiTokenPrincipal } from "../../accounts/service/authenticator.js";
import { nodeIdRefusal } from "./node-ids.js";
import { standingScopes } from "../../oauth/service/bearer.js";
import type { Authenticate } from "../broker/options.js";
import { ResultCode } from "../../../proto/wire/message.js";
import type { Services } from "../../services.js";
import type { TicketStore } from "./tickets.js";

export const DEFAULT_PROJECT_UUID = "00000000-0000-0000-0000-000000000000";

const MESSAGE_KINDS = [
  "upstreamOpenRequest",
  "upstreamResumeRequest",
  "upstreamCloseRequest",
  "upstreamChunk",
  "upstreamMetadata",
  "downstreamOpenRequest",
  "downstreamResumeRequest",
  "downstreamCloseRequest",
  "downstreamChunkAck",
  "downstreamChunkAckComplete",
  "downstreamMetadataAck",
  "upstreamCall",
  "downstreamCall",
  "upstreamCallAck",
] as const;

/** Scope message types (docs/roles-and-scopes.md) to the wire message kinds they allow. */
function kindsFor(types: ReadonlySet<string>): Set<string> {
  const allowed = new Set<string>();
  for (const kind of MESSAGE_KINDS) {
    const type = kind.startsWith("upstreamCall")
      ? "upstream_call"
      : kind.startsWith("downstreamCall")
        ? "downstream_call"
        : kind.startsWith("upstream")
          ? "upstream"
          : "downstream";
    if (types.has(type)) allowed.add(kind);
  }
  return allowed;
}

async function principalOf(
  svc: Pick<Services, "oauth" | "accounts">,
  tickets: TicketStore,
  token: string,
): Promise<Principal | undefined> {
  const fromTicket = await tickets.consumeAnywhere(token);
  if (fromTicket) return fromTicket;
  const claims = svc.oauth.verifyAccessToken(token);
  // Not one of our JWTs: a user's API token, with that user's standing roles (refused once deleted or expired).
  if (!claims) return apiTokenPrincipal(svc.accounts, token).catch(() => undefined);
  if (claims.restricted) return undefined;
  let scopes = claims.scope ? claims.scope.split(" ") : [];
  let isSuper = false;
  if (claims.sub_kind === "user") {
    const user = await svc.oauth.accounts.user(claims.sub);
    if (!user || user.disabled) return undefined;
    ({ scopes, isSuper } = standingScopes(scopes, user)); // as for HTTP: lost scopes are gone at once
  }
  return {
    kind: claims.sub_kind,
    uuid: claims.sub,
    isSuper,
    scopes,
    via: "bearer",
    clientId: claims.client_id,
    credentialId: claims.jti,
  };
}

export function brokerAuthenticator(
  svc: Pick<Services, "oauth" | "accounts" | "org" | "metrics">,
  tickets: TicketStore,
): Authenticate {
  return async (accessToken, projectUuid, nodeId) => {
    const principal = accessToken ? await principalOf(svc, tickets, accessToken.replace(/^bearer\s+/i, "")) : undefined;
    if (!principal)
      return {
        ok: false,
        resultCode: ResultCode.AUTH_FAILED,
        resultString: "invalid, expired or revoked access token",
      };
    const badNode = await nodeIdRefusal(svc, principal, nodeId);
    if (badNode) return { ok: false, resultCode: ResultCode.NODE_ID_MISMATCH, resultString: badNode };
    const project = (projectUuid || DEFAULT_PROJECT_UUID).toLowerCase();
    const subject = { kind: principal.kind, uuid: principal.uuid };
    const allowed = await svc.org.canUseProject(principal, project);
    svc.metrics.accessChecked(allowed);
    if (!allowed)
      return { ok: false, resultCode: ResultCode.AUTH_FAILED, resultString: "the subject may not use this project" };
    const types = svc.org.iscpMessages(principal, project);
    return { ok: true, subject, allowedMessages: kindsFor(types) };
  };
}
