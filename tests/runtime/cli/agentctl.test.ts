// agentctl as a child process against agents on real Unix sockets: output formats, exit codes with
// the server's detail, and a config-file round trip between two agents.
import { writeFile } from "node:fs/promises";
import path from "node:path";
import YAML from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentctl, startTestAgents, type TestAgent } from "../../support/agent.js";

let a: TestAgent;
let b: TestAgent;
beforeAll(async () => void ([a, b] = await startTestAgents(2)));
afterAll(() => Promise.all([a?.close(), b?.close()]));

describe("agentctl", () => {
  it("creates with YAML, lists as a table, and prints JSON with -o json", async () => {
    const created = await agentctl(a.socketPath, ["config", "upstream", "--create", "id: up1\nqos: partial"]);
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(/^qos\s+partial$/m);
    await agentctl(a.socketPath, [
      "--socket",
      a.socketPath,
      "config",
      "upstream",
      "-c",
      '{"id": "up2", "enabled": false}',
    ]);
    const list = await agentctl(a.socketPath, ["config", "upstream"]);
    expect(list.stdout.split("\n")[0]).toMatch(
      /^ID\s+ENABLED\s+RECOVER\s+PERSIST\s+QOS\s+FLUSH_POLICY\s+FLUSH_INTERVAL$/,
    );
    expect(list.stdout).toMatch(/^up2\s+false\s/m);
    const json = await agentctl(a.socketPath, ["-o", "json", "state", "upstream", "--enabled", "false"]);
    expect(JSON.parse(json.stdout)).toEqual([expect.objectContaining({ id: "up2", enabled: false, code: "none" })]);
  }, 120_000);

  it("exits non-zero with the server's detail", async () => {
    const bad = await agentctl(a.socketPath, ["config", "upstream", "--modify", "id: up1\nflush_interval: 100001"]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("flush_interval: Expected an integer from 1 to 100000");
    const missing = await agentctl(a.socketPath, ["measurement", "--delete", "0e4ed8f2-5b7a-4c65-9d8e-2f7f0b2d9a11"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(
      'measurement "0e4ed8f2-5b7a-4c65-9d8e-2f7f0b2d9a11" is not found (404 Resource is not found)',
    );
    const verify = await agentctl(a.socketPath, ["verify"]);
    expect(verify.code).toBe(3);
    expect(verify.stderr).toContain("not verified: client_secret is not set");
    const nowhere = await agentctl(path.join(a.dir, "nope.sock"), ["version"]);
    expect(nowhere.code).toBe(2);
    expect(nowhere.stderr).toContain("cannot reach the edge agent");
  }, 120_000);

  it("reports a YAML error in a config file at the line that is broken", async () => {
    const file = path.join(a.dir, "broken.yaml");
    await writeFile(file, "upstreams:\n  - id: up9\n      qos: partial\n");
    const r = await agentctl(a.socketPath, ["config-file", "apply", file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/not valid YAML or JSON: .* at line 3, column 10/);
  }, 120_000);

  it("refuses more than one action flag instead of silently doing one", async () => {
    const both = await agentctl(a.socketPath, ["config", "upstream", "--create", "id: both", "--delete", "up1"]);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(
      /--create.*cannot be used with option.*--delete|--delete.*cannot be used with option.*--create/,
    );
    expect((await a.api.get("/upstreams/both")).status).toBe(404);
    expect((await a.api.get("/upstreams/up1")).status).toBe(200);
    const meas = await agentctl(a.socketPath, ["measurement", "--get", "x", "--delete", "y"]);
    expect(meas.code).toBe(2);
    expect(meas.stderr).toContain("cannot be used with option");
  }, 120_000);

  it("round-trips the whole configuration between two agents with config-file show/apply", async () => {
    // Most of the setup goes through the API (fast); agentctl itself creates two of the items.
    await a.api.patch("/connection", { client_secret: "abc", edge_uuid: "0e4ed8f2-5b7a-4c65-9d8e-2f7f0b2d9a11" });
    await a.api.patch("/transport", { send_queue_size: 10 });
    await a.api.patch("/deferred-upload", { priority: "lower_than_realtime" });
    await a.api.post("/device-connectors/downstream", {
      id: "dcd",
      format: "logger-msg",
      ipc: { type: "fifo", path: `${a.dir}/d.fifo` },
    });
    await a.api.post("/downstreams", { id: "down1", dest_ids: ["dcd"] });
    await a.api.post("/filters/upstream", {
      id: "f1",
      type: "sampling",
      target: { type: "always" },
      change_to: { type: "sampling", interval_ms: 100 },
    });
    const steps = [
      [
        "config",
        "device-connector",
        "upstream",
        "-c",
        `id: dcu\nformat: iscp-v2-compat\ndest_ids: [up1, deferred]\nlaunch: {command: /bin/true, restart: {policy: never}}`,
      ],
      [
        "config",
        "filter",
        "upstream",
        "-c",
        "id: f2\ntype: rename\ntarget: {type: name, patterns: ['a/#']}\nchange_to: {type: rename, add_prefix: b/}",
      ],
    ];
    for (const s of steps) {
      const r = await agentctl(a.socketPath, s);
      expect(r.code, `${s.join(" ")}: ${r.stderr}`).toBe(0);
    }
    // A faithful copy to another agent carries the secret too: --show-secrets.
    const shown = await agentctl(a.socketPath, ["--show-secrets", "config-file", "show"]);
    expect(shown.code).toBe(0);
    const file = path.join(a.dir, "agent.yaml");
    await writeFile(file, shown.stdout);

    const applied = await agentctl(b.socketPath, ["config-file", "apply", file]);
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stdout).toMatch(/changes applied/);
    const again = await agentctl(b.socketPath, ["config-file", "show", "--show-secrets"]);
    expect(YAML.parse(again.stdout)).toEqual(YAML.parse(shown.stdout));
    expect((await agentctl(b.socketPath, ["config-file", "apply", file])).stdout).toContain("0 changes applied");
  }, 120_000);

  it("applies a file that replaces referenced items and reorders filters", async () => {
    const doc = YAML.parse((await agentctl(b.socketPath, ["config-file", "show"])).stdout) as Record<string, any>;
    doc.upstream = [{ id: "up3" }]; // up1 and up2 go; dcu must follow to up3 first
    doc.device_connectors_upstream[0].dest_ids = ["up3"];
    delete doc.device_connectors_upstream[0].launch;
    doc.filters_upstream = [doc.filters_upstream[1], doc.filters_upstream[0]];
    delete doc.downstream;
    const file = path.join(b.dir, "next.yaml");
    await writeFile(file, YAML.stringify(doc));
    const r = await agentctl(b.socketPath, ["config-file", "apply", file]);
    expect(r.code, r.stderr).toBe(0);
    const after = YAML.parse((await agentctl(b.socketPath, ["config-file", "show"])).stdout) as Record<string, any>;
    expect(after.upstream.map((u: { id: string }) => u.id)).toEqual(["up3"]);
    expect(after.device_connectors_upstream[0].dest_ids).toEqual(["up3"]);
    expect(after.device_connectors_upstream[0]).not.toHaveProperty("launch");
    expect(after.filters_upstream.map((f: { id: string }) => f.id)).toEqual(["f2", "f1"]);
    expect(after.downstream.map((d: { id: string }) => d.id)).toEqual(["down1"]); // section left out: kept

    await writeFile(file, "upstream: [{id: deferred}]\n");
    const refused = await agentctl(b.socketPath, ["config-file", "apply", file]);
    // Refused before any change, at the line and field.
    expect(refused.code).toBe(2);
    expect(refused.stderr).toBe(
      `agentctl: ${file} line 1: upstream[0].id: the id "deferred" is reserved for deferred upload\n`,
    );

    // A reference to an item that would not exist, and one the agent refuses half-way: nothing changes.
    await writeFile(file, "upstream: [{id: up4}]\n");
    const dangling = await agentctl(b.socketPath, ["config-file", "apply", file]);
    expect(dangling.code).toBe(1);
    expect(dangling.stderr).toBe(
      `agentctl: ${file} line 1: upstream: leaves out "up3", which device_connectors_upstream "dcu" (not in the file) names in dest_ids\n`,
    );
    expect(YAML.parse((await agentctl(b.socketPath, ["config-file", "show"])).stdout).upstream).toEqual(after.upstream);
  }, 120_000);
});
