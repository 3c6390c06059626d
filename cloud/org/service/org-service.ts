// svc.org: the organisation area as other areas see it. The access engine (also provided as
// svc.access by the access module), the in-memory org index, and what the iSCP broker asks before a ConnectRequest.
import type { Principal } from "../../auth/principal.js";
import { AccessEngine, type DecisionInput, type Subject } from "../../access/service/engine.js";
import type { Policy } from "../../access/service/policy.js";
import type { Db } from "../../database/db.js";
import { EdgeService } from "./edges.js";
import { MemberService } from "./members.js";
import type { OrgIndex } from "./org-index.js";
import { ProjectEdgeService } from "./project-edges.js";
import { MemberRepo } from "../repo/members.js";
import { TreeService } from "./tree.js";
import { UserDirectory } from "./users.js";
import { alwaysFresh, type Freshen } from "./index-sharing.js";

export interface OrgService {
  readonly index: OrgIndex;
  readonly policy: Policy;
  readonly engine: AccessEngine;
  readonly users: UserDirectory;
  readonly edges: EdgeService;
  readonly tree: TreeService;
  readonly groupMembers: MemberService;
  readonly projectMembers: MemberService;
  readonly projectEdges: ProjectEdgeService;
  /** The one access decision (guard, Check access, Check own access). */
  decide(input: DecisionInput): boolean;
  /**
   * May the principal use this project over iSCP (member, owner, edge of the project, super user)? A refusal is
   * decided again after a reload of the index on a cluster (a membership made through another peer a moment ago).
   */
  canUseProject(principal: Subject, projectUuid: string): Promise<boolean>;
  /** The route guard's decision, with a refusal decided again after a reload as for canUseProject. */
  allows(principal: Principal, method: string, path: string): Promise<boolean>;
  /** Resolves once the index holds what the database held at the call (at once on a single peer). */
  freshen: Freshen;
  /** iSCP message types the principal may use in the project (empty set: none). */
  iscpMessages(principal: Principal, projectUuid: string): ReadonlySet<string>;
  /** Call when a user is deleted: memberships go, owned edges lose their owner. */
  forgetUser(userUuid: string): Promise<void>;
}

declare module "../../services.js" {
  interface Services {
    /** Edges, groups, projects, members and the access engine (cloud/org/service/org-service.ts). */
    org: OrgService;
  }
}

/** A yes at once; a no only after a reload that started after the first look agrees. */
async function decidedFresh(freshen: Freshen, decide: () => boolean): Promise<boolean> {
  if (decide()) return true;
  await freshen();
  return decide();
}

/** `clientIdInUse`: whether an OAuth2 client (another area) already has a UUID an edge asks for. */
export function createOrgService(
  db: Db,
  index: OrgIndex,
  policy: Policy,
  accounts: ConstructorParameters<typeof UserDirectory>[0],
  clientIdInUse?: (uuid: string) => Promise<boolean>,
  freshen: Freshen = alwaysFresh,
): OrgService {
  const engine = new AccessEngine(index, policy);
  const users = new UserDirectory(accounts);
  const tree = new TreeService(db, index);
  const groupExists = (uuid: string) => tree.groupRow(uuid);
  const projectExists = (uuid: string) => tree.projectRow(uuid);
  const edges = new EdgeService(db, index, users, clientIdInUse);
  return {
    index,
    policy,
    engine,
    users,
    edges,
    tree,
    groupMembers: new MemberService(db, "group", index, users, policy, groupExists),
    projectMembers: new MemberService(db, "project", index, users, policy, projectExists),
    projectEdges: new ProjectEdgeService(db, index, projectExists),
    decide: (input) => engine.decide(input),
    canUseProject: (principal, projectUuid) =>
      decidedFresh(freshen, () => engine.canUseProject(principal, projectUuid)),
    allows: (principal, method, path) => decidedFresh(freshen, () => engine.allows(principal, method, path)),
    freshen,
    iscpMessages: (principal, projectUuid) => engine.iscpMessages(principal, principal.scopes, projectUuid),
    async forgetUser(userUuid) {
      await db.transaction(async (tx) => {
        await new MemberRepo(tx, "group_members", "group_uuid").deleteUser(userUuid);
        await new MemberRepo(tx, "project_members", "project_uuid").deleteUser(userUuid);
      });
      await edges.forgetOwner(userUuid);
      index.forgetUser(userUuid);
    },
  };
}
