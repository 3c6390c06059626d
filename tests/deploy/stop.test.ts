// systemd stops the edge agent with SIGTERM and kills what is left after the unit's TimeoutStopSec. An agent
// started with the unit's command line, streaming into an open measurement, must end that measurement (the
// cloud shows it completed with every point) and exit 0 within that time.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, expect, it } from "vitest";
import { writeNumbered } from "../e2e/points.js";
import { openFifoWriter, until } from "../e2e/stack.js";
import { timeoutStopMs, unitText } from "./unit-file.js";
import { startCloudWithEdge, startUnitAgent, type CloudWithEdge, type UnitAgent } from "./unit-agent.js";

let dir: string | undefined;
let cloud: CloudWithEdge | undefined;
let agent: UnitAgent | undefined;

afterEach(async () => {
  if (agent && agent.child.exitCode === null && agent.child.signalCode === null) agent.child.kill("SIGKILL");
  await cloud?.peer.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
  dir = cloud = agent = undefined;
});

it("SIGTERM ends the open measurement and exits 0 within the unit's TimeoutStopSec", async () => {
  const limitMs = timeoutStopMs(unitText("edge-agent"));
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "unit-stop-"));
  cloud = await startCloudWithEdge(path.join(dir, "cloud"));
  agent = await startUnitAgent(dir);
  const call = async (method: string, p: string, body: unknown) =>
    expect((await agent!.api.request(method, p, body)).status, `${method} ${p}`).toBeLessThan(300);
  const { edge } = cloud;
  await call("PATCH", "/connection", {
    server_url: cloud.peer.url,
    project_uuid: edge.projectUuid,
    edge_uuid: edge.edgeUuid,
    client_secret: edge.edgeSecret,
  });
  await call("POST", "/upstreams", { id: "rt", qos: "partial" });
  await call("POST", "/device-connectors/upstream", { id: "dc", format: "iscp-v2-compat", dest_ids: ["rt"] });
  const fifo = path.join(path.dirname(agent.socket), "ipc", "up-dc.fifo");
  const fh = await openFifoWriter(fifo);
  try {
    await writeNumbered(fh, 0, 1000);
    const [open] = await until(
      async () => {
        const ms = await cloud!.measurements();
        return ms.length === 1 && ms[0]!.received_data_points === 1000 && ms;
      },
      30_000,
      "1000 points in the cloud",
    );
    expect(open).toMatchObject({ status: "measuring", ended: false });

    // The connector still holds the FIFO open: the measurement is in progress when systemd stops the agent.
    // As systemd does: SIGTERM, then SIGKILL once TimeoutStopSec has passed (a killed agent has no exit code 0).
    const t0 = Date.now();
    agent.child.kill("SIGTERM");
    const child = agent.child;
    const killer = setTimeout(() => child.kill("SIGKILL"), limitMs);
    expect(await agent.exited).toBe(0);
    clearTimeout(killer);
    console.info(`edge-agent stopped in ${Date.now() - t0} ms (TimeoutStopSec ${limitMs / 1000} s)`);
  } finally {
    await fh.close().catch(() => undefined);
  }
  expect(await cloud.measurements()).toMatchObject([
    { status: "finished", ended: true, completed: true, received_data_points: 1000 },
  ]);
}, 120_000);
