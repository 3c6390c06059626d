// agentctl never prints the connection's client secret unless --show-secrets is given, and applying
// a file shown with the mask keeps the secret the agent has (the mask is not stored as the secret).
import { writeFile } from "node:fs/promises";
import path from "node:path";
import YAML from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentctl, startTestAgents, type TestAgent } from "../../support/agent.js";

const SECRET = "edge-secret-Zq7pX2";
const EDGE = "0e4ed8f2-5b7a-4c65-9d8e-2f7f0b2d9a11";
const MASK = "********";

let a: TestAgent;
let b: TestAgent;
beforeAll(async () => void ([a, b] = await startTestAgents(2)));
afterAll(() => Promise.all([a?.close(), b?.close()]));

describe("agentctl and the client secret", () => {
  it("masks the secret after config connection --modify and when showing it, in every format, unless --show-secrets", async () => {
    const modified = await agentctl(a.socketPath, [
      "config",
      "connection",
      "--modify",
      `client_secret: ${SECRET}\nedge_uuid: ${EDGE}`,
    ]);
    expect(modified.code, modified.stderr).toBe(0);
    expect(modified.stdout).toMatch(/^client_secret\s+\*{8}$/m);
    expect(modified.stdout).toContain(EDGE);
    expect((await a.api.get("/connection")).body).toMatchObject({ client_secret: SECRET, edge_uuid: EDGE });
    const [table, json, yaml, shown] = await Promise.all([
      agentctl(a.socketPath, ["config", "connection"]),
      agentctl(a.socketPath, ["-o", "json", "config", "connection"]),
      agentctl(a.socketPath, ["-o", "yaml", "config", "connection"]),
      agentctl(a.socketPath, ["--show-secrets", "-o", "json", "config", "connection"]),
    ]);
    for (const r of [modified, table, json, yaml]) {
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout + r.stderr).not.toContain(SECRET);
    }
    expect(JSON.parse(json.stdout)).toMatchObject({ client_secret: MASK, edge_uuid: EDGE });
    expect(YAML.parse(yaml.stdout)).toMatchObject({ client_secret: MASK });
    expect(JSON.parse(shown.stdout)).toMatchObject({ client_secret: SECRET });
  }, 120_000);

  it("does not echo a refused secret in the error either", async () => {
    const tooLong = "L".repeat(1025);
    const r = await agentctl(a.socketPath, ["config", "connection", "--modify", `client_secret: ${tooLong}`]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("client_secret");
    expect(r.stderr).not.toContain("LLLLLLLL");
    expect((await a.api.get("/connection")).body).toMatchObject({ client_secret: SECRET });
  }, 120_000);

  it("config-file show masks the secret; applying the masked file keeps each agent's own secret", async () => {
    await b.api.patch("/connection", { client_secret: "b-own-secret" });
    const [shown, revealed] = await Promise.all([
      agentctl(a.socketPath, ["config-file", "show"]),
      agentctl(a.socketPath, ["config-file", "show", "--show-secrets"]),
    ]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).not.toContain(SECRET);
    expect(YAML.parse(shown.stdout).connection).toMatchObject({ client_secret: MASK, edge_uuid: EDGE });
    expect(YAML.parse(revealed.stdout).connection.client_secret).toBe(SECRET);

    const file = path.join(a.dir, "masked.yaml");
    const doc = YAML.parse(shown.stdout);
    doc.transport.send_queue_size = 77; // one real change beside the masked secret
    await writeFile(file, YAML.stringify(doc));
    const [toA, toB] = await Promise.all([
      agentctl(a.socketPath, ["config-file", "apply", file]),
      agentctl(b.socketPath, ["config-file", "apply", file]),
    ]);
    expect(toA.code, toA.stderr).toBe(0);
    expect(toB.code, toB.stderr).toBe(0);
    expect((await a.api.get("/connection")).body).toMatchObject({ client_secret: SECRET, edge_uuid: EDGE });
    expect((await b.api.get("/connection")).body).toMatchObject({ client_secret: "b-own-secret", edge_uuid: EDGE });
    expect((await a.api.get("/transport")).body).toMatchObject({ send_queue_size: 77 });
    // Applying the same masked file again changes nothing.
    expect((await agentctl(a.socketPath, ["config-file", "apply", file])).stdout).toContain("0 changes applied");
  }, 120_000);
});
