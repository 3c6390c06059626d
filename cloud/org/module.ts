// The organisation area: edges (OAuth2 clients), groups, sub-groups, projects, members, project
// edges, and the access engine that replaces the accounts area's scope-only decider.
import { ISCP_MESSAGE_TYPES, ROLE_UUIDS, ROLES, SCOPES } from "../accounts/service/catalogue.js";
import { accessRoutes } from "../access/routes/check-access.js";
import { Policy } from "../access/service/policy.js";
import type { CloudModule } from "../module.js";
import { edgeClientResolver } from "./service/edge-clients.js";
import { orgMigrations } from "./repo/migrations.js";
import { OrgIndex } from "./service/org-index.js";
import { edgeRoutes } from "./routes/edges.js";
import { edgeSecretRoutes } from "./routes/edge-secrets.js";
import { groupRoutes } from "./routes/groups.js";
import { groupMemberRoutes, projectMemberRoutes } from "./routes/members.js";
import { projectRoutes } from "./routes/projects.js";
import { notify, onNotice } from "../cluster/service/notices.js";
import type { Services } from "../services.js";
import { createOrgService } from "./service/org-service.js";

/**
 * With --nats: a local update tells the other peers (one notice per tick however many updates), and a
 * notice from another peer reloads the whole index from the database (reloads coalesce).
 */
function shareOrgIndex(svc: Services, index: OrgIndex): void {
  const bus = svc.cluster.bus;
  if (bus.kind === "in-process") return;
  let told = false;
  index.onUpdate = () => {
    if (told) return;
    told = true;
    queueMicrotask(() => {
      told = false;
      notify(bus, "org");
    });
  };
  let running: Promise<void> | undefined;
  let again = false;
  const reload = (): void => {
    if (running) return void (again = true);
    running = index
      .reload(svc.db)
      .catch((e: unknown) => svc.log.warn({ err: String(e) }, "organisation index reload failed"))
      .finally(() => {
        running = undefined;
        if (again) {
          again = false;
          reload();
        }
      });
  };
  onNotice(bus, "org", reload);
}

export const orgModule: CloudModule = {
  name: "org",
  migrations: orgMigrations,
  routes: [...accessRoutes, ...edgeRoutes, ...edgeSecretRoutes, ...groupRoutes, ...groupMemberRoutes, ...projectRoutes, ...projectMemberRoutes],
  async init(svc) {
    const index = new OrgIndex();
    await index.load(svc.db);
    shareOrgIndex(svc, index);
    const policy = new Policy({ scopes: SCOPES, roles: ROLES, ownerRoleUuid: ROLE_UUIDS.owner, iscpMessageTypes: ISCP_MESSAGE_TYPES });
    // Every client resolver is asked; the edges' own resolver knows only existing edges, whose
    // UUIDs the edge service refuses before asking this.
    const clientIdInUse = async (uuid: string) => (await svc.oauth?.resolveClient(uuid)) !== undefined;
    svc.org = createOrgService(svc.db, index, policy, clientIdInUse);
    svc.access = svc.org.engine;
    // A deleted user leaves every group and project, and its edges lose their owner. The accounts
    // area has no deletion hook, so its repository's delete is wrapped here.
    const users = svc.accounts?.users;
    if (users) {
      const remove = users.delete.bind(users);
      users.delete = async (uuid: string) => {
        const result = await remove(uuid);
        await svc.org.forgetUser(uuid);
        return result;
      };
    }
    // Edges authenticate at the token endpoint when the OAuth2 area is present.
    svc.oauth?.clientResolvers.push(edgeClientResolver(index, svc.org.edges));
  },
};
