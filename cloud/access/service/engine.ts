// The one access decision function. The route guard, Check access, Check own access and the iSCP
// broker all come here. Rules (docs/access-control.md):
//  - no subject, or a path naming neither a project nor a group: the request's scopes decide;
//  - a project path: a user is judged by the roles held in that project (own + inherited through
//    parent groups; owners hold everything), an edge by the request's scopes if it belongs to the
//    project; anyone else is refused;
//  - a group path: likewise with the roles held in that group; edges never belong to groups.
// Within a scope set, a matching deny beats any allow. Super users pass everything, and a user may
// always use its own account (/auth/users/me...), as the "signed-in" routes there do.
import { isOwnAccountPath } from "../../accounts/service/scopes.js";
import type { AccessDecider, Principal } from "../../auth/principal.js";
import type { OrgIndex } from "../../org/service/org-index.js";
import { classify, DEFAULT_PROJECT_UUID, needsNormalising, normalisePath, type Target } from "./classify.js";
import type { Matcher, Policy } from "./policy.js";

export interface Subject {
  kind: "user" | "edge";
  uuid: string;
  isSuper?: boolean;
}

export interface DecisionInput {
  subject?: Subject;
  scopes: readonly string[];
  method: string;
  path: string;
}

export class AccessEngine implements AccessDecider {
  private cache = new Map<string, Matcher | null>();
  private cacheEpoch = -1;

  constructor(
    readonly index: OrgIndex,
    readonly policy: Policy,
  ) {}

  decide(input: DecisionInput): boolean {
    const p = input.path;
    // The router matches paths case-insensitively, so the decision must too (globs are lower case).
    const path = (needsNormalising(p) ? normalisePath(p) : p).toLowerCase();
    const method = input.method.toUpperCase();
    // A user may always use its own account: every /auth/users/me route is served to any signed-in
    // user whatever its scopes, so the answer for them must say so too.
    if (input.subject?.kind === "user" && isOwnAccountPath(path)) return true;
    const m = this.matcherFor(input.subject, input.scopes, classify(path));
    return m !== null && m.test(method, path);
  }

  /** The guard (svc.access): the principal's own scopes are the "request's scopes". */
  allows(principal: Principal, method: string, path: string): boolean {
    return this.decide({ subject: principal, scopes: principal.scopes, method, path });
  }

  /**
   * The matcher that applies to a subject at a target, or null when the subject is refused outright
   * (outside the project or group, or an edge that no longer exists).
   */
  matcherFor(subject: Subject | undefined, scopes: readonly string[], target: Target): Matcher | null {
    if (!subject) return this.policy.forScopes(scopes);
    if (subject.isSuper) return this.policy.all;
    if (subject.kind === "edge" && !this.index.edges.has(subject.uuid)) return null;
    if (target.kind === "none") return this.policy.forScopes(scopes);
    if (subject.kind === "edge") {
      if (target.kind === "group") return null;
      return this.index.edgeBelongs(target.uuid, subject.uuid) ? this.policy.forScopes(scopes) : null;
    }
    return this.memberMatcher(target.kind, target.uuid, subject.uuid);
  }

  private memberMatcher(kind: "project" | "group", uuid: string, user: string): Matcher | null {
    if (this.cacheEpoch !== this.index.epoch || this.cache.size > 200_000) {
      this.cache.clear();
      this.cacheEpoch = this.index.epoch;
    }
    const key = `${kind[0]}${uuid}${user}`;
    let m = this.cache.get(key);
    if (m === undefined) {
      m = this.computeMemberMatcher(kind, uuid, user);
      this.cache.set(key, m);
    }
    return m;
  }

  private computeMemberMatcher(kind: "project" | "group", uuid: string, user: string): Matcher | null {
    const exists = kind === "project" ? this.index.projects.has(uuid) : this.index.groups.has(uuid);
    if (!exists) return null;
    const s = kind === "project" ? this.index.standingInProject(uuid, user) : this.index.standingInGroup(uuid, user);
    if (!s.member) return null;
    if (s.owner) return this.policy.all;
    return this.policy.forRoles(s.inherited.length ? [...s.roles, ...s.inherited] : s.roles);
  }

  // --- for the iSCP broker ---
  canUseProject(subject: Subject, projectUuid: string): boolean {
    const p = projectUuid.toLowerCase();
    if (p === DEFAULT_PROJECT_UUID)
      return subject.kind === "user" || this.index.edges.has(subject.uuid) || !!subject.isSuper;
    return this.matcherFor(subject, [], { kind: "project", uuid: p }) !== null;
  }

  /** iSCP message types the subject may use in the project (empty when it may not use it). */
  iscpMessages(subject: Subject, scopes: readonly string[], projectUuid: string): ReadonlySet<string> {
    const p = projectUuid.toLowerCase();
    const target: Target = p === DEFAULT_PROJECT_UUID ? { kind: "none" } : { kind: "project", uuid: p };
    return this.matcherFor(subject, scopes, target)?.iscpMessages ?? new Set();
  }
}
