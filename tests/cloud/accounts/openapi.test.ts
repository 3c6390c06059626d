import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPeer, type TestPeer } from "../harness.js";

// operationId, method, path: the intdash REST API's roles, scopes, users and own-user
// operations, and our own additions.
const EXPECTED: Array<[string, string, string, number]> = [
  ["listRoles", "get", "/auth/roles", 200],
  ["getRole", "get", "/auth/roles/{role_uuid}", 200],
  ["listScopes", "get", "/auth/scopes", 200],
  ["getScope", "get", "/auth/scopes/{scope_uuid}", 200],
  ["listUsers", "get", "/auth/users", 200],
  ["createUser", "post", "/auth/users", 201],
  ["getUser", "get", "/auth/users/{user_uuid}", 200],
  ["updateUser", "patch", "/auth/users/{user_uuid}", 200],
  ["deleteUser", "delete", "/auth/users/{user_uuid}", 204],
  ["enableUser", "put", "/auth/users/{user_uuid}/enable", 200],
  ["disableUser", "put", "/auth/users/{user_uuid}/disable", 200],
  ["listUsersRoles", "get", "/auth/users/{user_uuid}/roles", 200],
  ["assignRole", "put", "/auth/users/{user_uuid}/roles/{role_uuid}", 200],
  ["unassignRole", "delete", "/auth/users/{user_uuid}/roles/{role_uuid}", 204],
  ["updateMyAddressToVerified", "put", "/auth/users/me/emails/{user_email_id}/verified", 200],
  ["createEmail", "post", "/auth/users/{user_uuid}/emails", 201],
  ["updateEmail", "patch", "/auth/users/{user_uuid}/emails/{user_email_id}", 200],
  ["deleteEmail", "delete", "/auth/users/{user_uuid}/emails/{user_email_id}", 204],
  ["sendVerificationEmail", "put", "/auth/users/{user_uuid}/emails/{user_email_id}/verification", 200],
  ["updateToVerified", "put", "/auth/users/{user_uuid}/emails/{user_email_id}/verified", 200],
  ["createTemporaryPassword", "put", "/auth/users/{user_uuid}/password", 200],
  ["unlockPassword", "put", "/auth/users/{user_uuid}/password/unlock", 200],
  ["introspectAPIToken", "post", "/auth/users/tokens/introspection", 200],
  ["listAPITokens", "get", "/auth/users/{user_uuid}/tokens", 200],
  ["createAPIToken", "post", "/auth/users/{user_uuid}/tokens", 201],
  ["updateAPIToken", "patch", "/auth/users/{user_uuid}/tokens/{user_api_token_id}", 200],
  ["deleteAPIToken", "delete", "/auth/users/{user_uuid}/tokens/{user_api_token_id}", 204],
  ["getMe", "get", "/auth/users/me", 200],
  ["updateMe", "patch", "/auth/users/me", 200],
  ["createMyEmail", "post", "/auth/users/me/emails", 201],
  ["updateMyEmail", "patch", "/auth/users/me/emails/{user_email_id}", 200],
  ["deleteMyEmail", "delete", "/auth/users/me/emails/{user_email_id}", 204],
  ["sendVerificationEmailToMyAddress", "put", "/auth/users/me/emails/{user_email_id}/verification", 200],
  ["changePassword", "put", "/auth/users/me/password", 200],
  ["checkPassword", "post", "/auth/users/me/password/check", 200],
  ["listMyAPITokens", "get", "/auth/users/me/tokens", 200],
  ["createMyAPIToken", "post", "/auth/users/me/tokens", 201],
  ["updateMyAPIToken", "patch", "/auth/users/me/tokens/{user_api_token_id}", 200],
  ["deleteMyAPIToken", "delete", "/auth/users/me/tokens/{user_api_token_id}", 204],
  ["listMyRoles", "get", "/auth/users/me/roles", 200],
  ["verifyEmailByToken", "put", "/auth/users/emails/verified", 200],
  ["verifyEmailByLink", "get", "/auth/users/emails/verified", 200],
  ["requestPasswordRecovery", "post", "/auth/users/password/recovery", 204],
];

describe("OpenAPI document", () => {
  let peer: TestPeer;
  let doc: any;
  beforeAll(async () => {
    peer = await startTestPeer();
    doc = await (await peer.api("/openapi.json")).json();
  });
  afterAll(async () => {
    await peer.stop();
  });

  it("lists every served route with its operationId", () => {
    for (const r of peer.routes.filter((r) => !r.hidden)) {
      const op = doc.paths[r.path]?.[r.method.toLowerCase()];
      expect(op, `${r.method} ${r.path}`).toBeDefined();
      expect(op.operationId).toBe(r.operationId);
      expect(op.responses[String(r.success)]).toBeDefined();
    }
    const documented = Object.entries(doc.paths).flatMap(([p, ops]: [string, any]) =>
      Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`),
    );
    expect(documented.sort()).toEqual(
      peer.routes
        .filter((r) => !r.hidden)
        .map((r) => `${r.method} ${r.path}`)
        .sort(),
    );
  });

  it("has every accounts operation at the real intdash method, path and success status", () => {
    for (const [id, method, path, success] of EXPECTED) {
      const op = doc.paths[path]?.[method];
      expect(op?.operationId, `${method} ${path}`).toBe(id);
      expect(Object.keys(op.responses), id).toContain(String(success));
    }
    const ids = peer.routes.map((r) => r.operationId);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("documents parameters, bodies with limits, and the auth schemes", () => {
    const create = doc.paths["/auth/users"].post;
    const body = create.requestBody.content["application/json"].schema;
    expect(body.required).toEqual(expect.arrayContaining(["name", "role_uuids"]));
    expect(JSON.stringify(body.properties.name)).toContain("256");
    const list = doc.paths["/auth/users"].get.parameters.map((p: any) => p.name);
    expect(list).toEqual(
      expect.arrayContaining([
        "uuid[]",
        "role_uuid[]",
        "name[]",
        "nickname[]",
        "email[]",
        "disabled",
        "is_super",
        "is_temporary",
        "min_sign_in_attempt_count",
        "max_sign_in_attempt_count",
        "sort",
        "page",
        "per_page",
      ]),
    );
    expect(doc.paths["/auth/users/{user_uuid}"].get.parameters[0]).toMatchObject({
      name: "user_uuid",
      in: "path",
      required: true,
    });
    expect(doc.paths["/auth/users"].get.security).toEqual(
      expect.arrayContaining([{ IntdashToken: [] }, { OAuth2TokenInHeader: [] }]),
    );
    expect(doc.paths["/auth/users/emails/verified"].put.security).toEqual([]);
  });

  it("is self-contained: every $ref resolves inside the document", () => {
    const refs = new Set<string>();
    const walk = (x: unknown): void => {
      if (Array.isArray(x)) x.forEach(walk);
      else if (x && typeof x === "object")
        for (const [k, v] of Object.entries(x)) {
          if (k === "$ref" && typeof v === "string") refs.add(v);
          else walk(v);
        }
    };
    walk(doc);
    expect(refs.size).toBeGreaterThan(0);
    for (const ref of refs) {
      expect(ref, ref).toMatch(/^#\//);
      const target = ref
        .slice(2)
        .split("/")
        .reduce((o: any, k) => o?.[k.replace(/~1/g, "/").replace(/~0/g, "~")], doc);
      expect(target, `${ref} does not resolve`).toBeDefined();
    }
  });

  it("types every parameter as the server decodes it (integers, booleans, enums, arrays)", () => {
    for (const [p, ops] of Object.entries<any>(doc.paths))
      for (const [m, op] of Object.entries<any>(ops))
        for (const param of op.parameters ?? [])
          expect(Object.keys(param.schema).length, `${m} ${p} ${param.name}`).toBeGreaterThan(0);
    const params = Object.fromEntries(doc.paths["/auth/users"].get.parameters.map((x: any) => [x.name, x.schema]));
    expect(params.page).toMatchObject({ type: "integer", minimum: 1, default: 1 });
    expect(params.per_page).toMatchObject({ type: "integer", minimum: 1, maximum: 200, default: 30 });
    expect(params.disabled).toMatchObject({ type: "boolean" });
    expect(params.min_sign_in_attempt_count).toMatchObject({ type: "integer", minimum: 0 });
    expect(params.sort.enum).toEqual(expect.arrayContaining(["name", "name+", "name-"]));
    expect(params["uuid[]"]).toMatchObject({ type: "array", items: { type: "string", format: "uuid" } });
    const emailId = doc.paths["/auth/users/{user_uuid}/emails/{user_email_id}"].patch.parameters.find(
      (x: any) => x.name === "user_email_id",
    );
    expect(emailId.schema).toMatchObject({ type: "integer", minimum: 1 });
  });

  it("forbids unknown keys in JSON bodies, lets form bodies carry them (ignored), and documents 304 where the API answers it", () => {
    const body = doc.paths["/auth/users"].post.requestBody.content["application/json"].schema;
    expect(body.additionalProperties).toBe(false);
    const form = doc.paths["/auth/oauth2/token"].post.requestBody.content["application/x-www-form-urlencoded"].schema;
    expect(form.additionalProperties).not.toBe(false);
    expect(Object.keys(doc.paths["/auth/users/{user_uuid}/roles/{role_uuid}"].put.responses)).toEqual(
      expect.arrayContaining(["200", "304"]),
    );
    for (const kind of ["groups/{group_uuid}", "projects/{project_uuid}"]) {
      const owner = doc.paths[`/auth/${kind}/members/{user_uuid}/owner`];
      expect(Object.keys(owner.put.responses)).toEqual(expect.arrayContaining(["200", "304"]));
      expect(Object.keys(owner.delete.responses)).toEqual(expect.arrayContaining(["204", "304", "403"]));
    }
    expect(Object.keys(doc.paths["/auth/projects/{project_uuid}/edges/{edge_uuid}"].patch.responses)).toEqual(
      expect.arrayContaining(["200", "304"]),
    );
  });
});
