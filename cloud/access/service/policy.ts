// The accounts catalogue (scopes, roles, endpoint globs) compiled for fast decisions. A set of
// scope names becomes one allow-regex and one deny-regex per method (deny wins), memoised by the
// set, so a decision costs a map lookup plus at most two regex tests however many scopes are held.
import { globToRegExp, type RoleDef, type ScopeDef } from "../../accounts/service/scopes.js";

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;

export interface Catalogue {
  scopes: readonly ScopeDef[];
  roles: readonly RoleDef[];
  /** Holders of this role (the owner attribute) have every permission of the group or project. */
  ownerRoleUuid: string;
  /** All iSCP message types (what owners may use). */
  iscpMessageTypes: readonly string[];
}

export class Matcher {
  constructor(
    private readonly allow: ReadonlyMap<string, RegExp>,
    private readonly deny: ReadonlyMap<string, RegExp>,
    readonly iscpMessages: ReadonlySet<string>,
    readonly all = false,
  ) {}
  test(method: string, path: string): boolean {
    if (this.all) return true;
    const d = this.deny.get(method);
    if (d !== undefined && d.test(path)) return false;
    const a = this.allow.get(method);
    return a !== undefined && a.test(path);
  }
}

function compile(rules: readonly { method: string; path: string }[]): Map<string, RegExp> {
  const byMethod = new Map<string, Set<string>>();
  for (const r of rules) {
    // accounts' globs are anchored `^...$`; strip the anchors to join them into one alternation.
    // Lower case: the engine folds request paths, as the router matches them case-insensitively.
    const src = globToRegExp(r.path.toLowerCase()).source.slice(1, -1);
    for (const m of r.method === "*" ? METHODS : [r.method.toUpperCase()])
      (byMethod.get(m) ?? byMethod.set(m, new Set()).get(m)!).add(src);
  }
  const out = new Map<string, RegExp>();
  for (const [m, sources] of byMethod) out.set(m, new RegExp(`^(?:${[...sources].join("|")})$`));
  return out;
}

export class Policy {
  readonly all: Matcher;
  readonly nothing = new Matcher(new Map(), new Map(), new Set());
  private readonly scopes = new Map<string, ScopeDef>();
  private readonly roles = new Map<string, RoleDef>();
  private readonly byScopeSet = new Map<string, Matcher>();
  /** A principal's scope array is reused across its requests: skip the join for it. */
  private readonly byArray = new WeakMap<readonly string[], Matcher>();
  private readonly byRoleSet = new Map<string, Matcher>();

  constructor(readonly catalogue: Catalogue) {
    for (const s of catalogue.scopes) this.scopes.set(s.name, s);
    for (const r of catalogue.roles) this.roles.set(r.uuid, r);
    this.all = new Matcher(new Map(), new Map(), new Set(catalogue.iscpMessageTypes), true);
  }

  get ownerRoleUuid() {
    return this.catalogue.ownerRoleUuid;
  }
  hasRole(uuid: string) {
    return this.roles.has(uuid);
  }

  /** Matcher for a set of scope names (unknown names grant nothing). */
  forScopes(names: readonly string[]): Matcher {
    if (names.length === 0) return this.nothing;
    const known = this.byArray.get(names);
    if (known !== undefined) return known;
    const m = this.forScopeKey(names);
    this.byArray.set(names, m);
    return m;
  }

  private forScopeKey(names: readonly string[]): Matcher {
    const key = names.length === 1 ? names[0]! : names.join(" ");
    let m = this.byScopeSet.get(key);
    if (m === undefined) {
      const rules = [...new Set(names)].map((n) => this.scopes.get(n)).filter((r): r is ScopeDef => r !== undefined);
      m = new Matcher(
        compile(rules.flatMap((r) => r.allowed_endpoints)),
        compile(rules.flatMap((r) => r.denied_endpoints)),
        new Set(rules.flatMap((r) => r.allowed_iscp_messages.map((x) => x.type))),
      );
      if (this.byScopeSet.size > 10_000) this.byScopeSet.clear();
      this.byScopeSet.set(key, m);
    }
    return m;
  }

  /** Matcher for a set of role UUIDs; the owner role grants everything. */
  forRoles(roleUuids: readonly string[]): Matcher {
    if (roleUuids.length === 0) return this.nothing;
    const key = roleUuids.length === 1 ? roleUuids[0]! : [...new Set(roleUuids)].sort().join(" ");
    let m = this.byRoleSet.get(key);
    if (m === undefined) {
      m = roleUuids.includes(this.ownerRoleUuid)
        ? this.all
        : this.forScopes([...new Set(roleUuids.flatMap((r) => this.roles.get(r)?.scopeNames ?? []))].sort());
      if (this.byRoleSet.size > 10_000) this.byRoleSet.clear();
      this.byRoleSet.set(key, m);
    }
    return m;
  }
}
