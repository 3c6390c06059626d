// The organisation area: edges (OAuth2 clients), groups, sub-groups, projects, members, project
// edges, and the in-memory index the access engine (cloud/access, its own module) decides on.
import { ISCP_MESSAGE_TYPES, ROLE_UUIDS, ROLES, SCOPES } from "../accounts/service/catalogue.js";
import { Policy } from "../access/service/policy.js";
import type { ProvidingModule } from "../module-contract.js";
import { edgeClientResolver } from "./service/edge-clients.js";
import { orgMigrations } from "./repo/migrations.js";
import { OrgIndex } from "./service/org-index.js";
import { edgeRoutes } from "./routes/edges.js";
import { edgeSecretRoutes } from "./routes/edge-secrets.js";
import { groupRoutes } from "./routes/groups.js";
import { groupMemberRoutes, projectMemberRoutes } from "./routes/members.js";
import { projectRoutes } from "./routes/projects.js";
import { shareOrgIndex } from "./service/index-sharing.js";
import type { Services } from "../services.js";
import { createOrgService } from "./service/org-service.js";

type Needs = Pick<Services, "db" | "log" | "cluster" | "accounts" | "oauth">;

export const orgModule: ProvidingModule<Needs, Pick<Services, "org">> = {
  name: "org",
  migrations: orgMigrations,
  routes: [
    ...edgeRoutes,
    ...edgeSecretRoutes,
    ...groupRoutes,
    ...groupMemberRoutes,
    ...projectRoutes,
    ...projectMemberRoutes,
  ],
  async provide(svc) {
    const index = new OrgIndex();
    await index.load(svc.db);
    const freshen = shareOrgIndex(svc.cluster.bus, svc.db, index, (e) =>
      svc.log.warn({ err: String(e) }, "organisation index reload failed"),
    );
    const policy = new Policy({
      scopes: SCOPES,
      roles: ROLES,
      ownerRoleUuid: ROLE_UUIDS.owner,
      iscpMessageTypes: ISCP_MESSAGE_TYPES,
    });
    // Every client resolver is asked; the edges' own resolver knows only existing edges, whose
    // UUIDs the edge service refuses before asking this.
    const clientIdInUse = async (uuid: string) => (await svc.oauth.resolveClient(uuid)) !== undefined;
    return { org: createOrgService(svc.db, index, policy, svc.accounts, clientIdInUse, freshen) };
  },
  // Edges authenticate at the token endpoint.
  clientResolvers: (svc) => [edgeClientResolver(svc.org)],
  // A deleted user leaves every group and project, and its edges lose their owner.
  on: { userDeleted: (svc, userUuid) => svc.org.forgetUser(userUuid) },
};
