// `edge-agent --config FILE` as a service runs it: the real agent as a child process boots from the file,
// applies a changed file on SIGHUP (what the file names wins over API changes, the rest keeps them),
// keeps its settings and logs the line and field of a bad file on SIGHUP, and refuses a bad file at start.
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { ApiClient } from "../../../runtime/cli/client.js";
import { eventually } from "../../support/agent.js";
import { agentProcesses } from "../../support/agent-process.js";

const agents = agentProcesses();

async function agentWithConfig(yaml: string) {
  const dir = await agents.dir("agent-config-");
  const config = path.join(dir, "config.yaml");
  fs.writeFileSync(config, yaml);
  const socket = path.join(dir, "agent.sock");
  const p = agents.spawn(["--socket", socket, "--data", path.join(dir, "data"), "--config", config]);
  const logs = () => p.logs() as Array<{ level: number; msg: string; changes?: string[]; problems?: string[] }>;
  return { ...p, config, api: new ApiClient(socket), logs };
}

const FIRST = `# the device's settings
connection:
  server_url: http://127.0.0.1:9/
  edge_uuid: 11111111-2222-3333-4444-555555555555
transport:
  send_queue_size: 100
upstream:
  - id: rt
    enabled: false
`;

it("boots from the file, applies a changed file on SIGHUP and keeps its settings when the file turns bad", async () => {
  const a = await agentWithConfig(FIRST);
  const applied = (n: number) =>
    eventually(() => {
      const lines = a.logs().filter((l) => l.msg.startsWith("config file applied"));
      return lines.length >= n && lines[n - 1];
    }, 60_000);

  const boot = await applied(1);
  expect(boot.changes).toEqual(["updated connection", "updated transport", "created upstream rt"]);
  expect((await a.api.get<{ send_queue_size: number }>("/transport")).body.send_queue_size).toBe(100);
  expect((await a.api.get<{ items: unknown[] }>("/upstreams")).body.items).toEqual([
    expect.objectContaining({ id: "rt", enabled: false, qos: "unreliable" }),
  ]);

  // Changes through the API: a field the file's transport leaves out stays, a list the file names is the file's.
  expect((await a.api.patch("/transport", { compression_level: 6 })).status).toBe(200);
  expect((await a.api.post("/upstreams", { id: "api-only", enabled: false })).status).toBe(201);
  expect((await a.api.patch("/upstreams/rt", { flush_interval: 50 })).status).toBe(200);
  fs.writeFileSync(
    a.config,
    FIRST.replace("    enabled: false\n", "    enabled: false\n    qos: partial\n  - id: second\n    enabled: false\n"),
  );
  a.child.kill("SIGHUP");
  const reload = await applied(2);
  expect(reload.changes).toEqual(["updated upstream rt", "created upstream second", "deleted upstream api-only"]);
  expect((await a.api.get<{ items: { id: string; qos: string }[] }>("/upstreams")).body.items).toEqual([
    // qos from the file; flush_interval, which the file leaves out, as the API set it.
    expect.objectContaining({ id: "rt", qos: "partial", flush_interval: 50 }),
    expect.objectContaining({ id: "second" }),
  ]);
  expect((await a.api.get<{ compression_level: number }>("/transport")).body.compression_level).toBe(6);

  fs.writeFileSync(a.config, "upstream:\n  - id: rt\n    qos: fast\n  - id: other\n    enabled: maybe\n");
  a.child.kill("SIGHUP");
  const refused = await eventually(() => a.logs().find((l) => l.msg.startsWith("config file refused")), 60_000);
  expect(refused.level).toBe(50);
  expect(refused.problems).toEqual([
    `${a.config} line 3: upstream[0].qos: Expected "partial" | "unreliable", actual "fast"`,
    `${a.config} line 5: upstream[1].enabled: Expected boolean, actual "maybe"`,
  ]);
  // Still running, on the settings from before.
  expect((await a.api.get<{ items: { id: string }[] }>("/upstreams")).body.items.map((u) => u.id)).toEqual([
    "rt",
    "second",
  ]);
  expect(a.child.exitCode).toBeNull();
}, 120_000);

it("undoes a file the agent refuses half-way (its launch policy), keeping the settings from before", async () => {
  const a = await agentWithConfig(FIRST);
  await eventually(() => a.logs().find((l) => l.msg.startsWith("config file applied")), 60_000);
  fs.writeFileSync(
    a.config,
    `${FIRST.replace("    enabled: false\n", "    enabled: false\n    qos: partial\n")}device_connectors_upstream:\n  - id: dc\n    format: iscp-v2-compat\n    dest_ids: [rt]\n    launch:\n      command: /usr/bin/true\n`,
  );
  a.child.kill("SIGHUP");
  const refused = await eventually(() => a.logs().find((l) => l.msg.startsWith("config file refused")), 60_000);
  expect(refused.problems).toEqual([
    expect.stringMatching(
      new RegExp(
        `^${a.config} line 12: device_connectors_upstream\\[0\\]: the agent refused it: create device_connectors_upstream dc: .*/usr/bin/true`,
      ),
    ),
  ]);
  // The upstream the file changed before the refusal is back as it was.
  expect((await a.api.get<{ qos: string }>("/upstreams/rt")).body.qos).toBe("unreliable");
  expect((await a.api.get<{ items: unknown[] }>("/device-connectors/upstream")).body.items).toEqual([]);
}, 120_000);

it("refuses a bad file at start with its line and field, and exits", async () => {
  const a = await agentWithConfig(
    `${FIRST}device_connectors_upstream:\n  - id: dc\n    format: iscp-v2-compat\n    dest_ids: [rt, nowhere]\n`,
  );
  expect(await a.exited).toBe(2);
  expect(a.stderr()).toBe(
    `edge-agent: ${a.config} line 13: device_connectors_upstream[0].dest_ids[1]: upstream "nowhere" is not configured\n` +
      "edge-agent: config file refused\n",
  );
  expect(fs.existsSync(a.api.socketPath)).toBe(false);
}, 120_000);

it("keeps running on SIGHUP without a configuration file (systemctl reload)", async () => {
  const dir = await agents.dir("agent-hup-");
  const socket = path.join(dir, "agent.sock");
  const a = agents.spawn(["--socket", socket, "--data", path.join(dir, "data")]);
  const api = new ApiClient(socket);
  await eventually(async () => (await api.get("/connection")).status === 200, 60_000);
  a.child.kill("SIGHUP");
  await eventually(() => a.stdout().includes("no configuration file (--config) to apply"), 30_000);
  expect((await api.get("/version")).status).toBe(200);
  expect(a.child.exitCode).toBeNull();
}, 120_000);
