// Edges as OAuth2 clients: the edge UUID is the client_id, any of its client secrets authenticates
// it (client_secret_post), and a client_credentials token's subject is the edge with the scopes
// of the catalogue's edge role.
import { findRole, ROLE_UUIDS } from "../../accounts/service/catalogue.js";
import type { ClientResolver } from "../../oauth/clients/model.js";
import type { OrgService } from "./org-service.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function edgeClientResolver(org: Pick<OrgService, "index" | "edges" | "freshen">): ClientResolver {
  const { index, edges } = org;
  const scopes = findRole(ROLE_UUIDS.edge)?.scopeNames ?? [];
  return async (clientId) => {
    if (!UUID.test(clientId)) return undefined;
    const uuid = clientId.toLowerCase();
    // An edge made through another peer a moment ago: known once the index is reloaded.
    if (!index.edges.has(uuid)) await org.freshen();
    if (!index.edges.has(uuid)) return undefined;
    return {
      clientId: uuid,
      kind: "edge",
      grantTypes: ["client_credentials"],
      tokenEndpointAuthMethod: "client_secret_post",
      redirectUris: [],
      tlsClientAuthSubjectDn: "",
      scopeCap: scopes,
      credentials: async () =>
        index.edges.has(uuid) ? { subject: { kind: "edge" as const, uuid }, scopes } : undefined,
      verifySecret: (secret) => edges.verifySecret(uuid, secret),
    };
  };
}
