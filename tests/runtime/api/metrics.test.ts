// The agent's Prometheus metrics as an operator scrapes them: on the command socket (GET /api/v1/metrics)
// after real points went from a FIFO through the agent to a real cloud peer, and on --metrics-listen.
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { numberedFrame, writeNumbered } from "../../e2e/points.js";
import { openFifoWriter, startStack, streamThroughRt, until, type Stack } from "../../e2e/stack.js";
import { metric } from "../../support/prometheus.js";
import { tempDir } from "../../support/agent.js";
import { ApiClient } from "../../../runtime/cli/client.js";

let s: Stack;
beforeAll(async () => {
  s = await startStack();
  await s.connect();
  await streamThroughRt(s);
}, 120_000);
afterAll(async () => s?.close());

const scrape = async () => {
  const r = await s.agentApi.request<string>("GET", "/metrics");
  expect(r.status).toBe(200);
  expect(r.headers["content-type"]).toMatch(/^text\/plain; version=0\.0\.4/);
  return r.body;
};

describe("agent metrics on the command socket", () => {
  it("counts points received, corrupt regions, points sent and chunks acknowledged, and shows the queue", async () => {
    const empty = await scrape();
    for (const name of [
      "agent_queue_bytes",
      "agent_queue_chunks",
      "agent_deferred_pending_bytes",
      "agent_array_buffers_bytes",
      "process_cpu_user_seconds_total",
      "nodejs_heap_size_used_bytes",
    ])
      expect(metric(empty, name)).toBeGreaterThanOrEqual(0);
    for (const name of [
      "agent_points_received_total",
      "agent_points_sent_total",
      "agent_chunks_acked_total",
      "agent_connector_restarts_total",
      "agent_fifo_corrupt_total",
    ])
      expect(empty).toContain(`# TYPE ${name} counter`);

    const fh = await openFifoWriter(s.fifo("dc"));
    try {
      await fh.write(Buffer.concat([numberedFrame(0), Buffer.alloc(64, 0xff), numberedFrame(1)]));
      await writeNumbered(fh, 2, 100);
      const text = await until(
        async () => {
          const t = await scrape();
          return (
            (metric(t, "agent_chunks_acked_total", { upstream: "rt" }) ?? 0) > 0 &&
            (metric(t, "agent_points_sent_total", { upstream: "rt" }) ?? 0) >= 99 &&
            t
          );
        },
        30_000,
        "the points sent and acknowledged",
      );
      // Frame 1, right after the garbage, may be swallowed while resynchronising.
      expect(metric(text, "agent_points_received_total", { channel: "dc" })).toBeGreaterThanOrEqual(99);
      expect(metric(text, "agent_points_received_total", { channel: "dc" })).toBeLessThanOrEqual(100);
      expect(metric(text, "agent_fifo_corrupt_total", { channel: "dc" })).toBe(1);
      expect(metric(text, "agent_connector_restarts_total", { channel: "dc" })).toBe(0);
      expect(metric(text, "agent_points_sent_total", { upstream: "rt" })).toBeLessThanOrEqual(100);
    } finally {
      await fh.close();
    }
  }, 120_000);

  it("keeps the channel's totals when the channel is recreated (counters never go back)", async () => {
    const before = metric(await scrape(), "agent_points_received_total", { channel: "dc" })!;
    expect(before).toBeGreaterThan(0);
    await s.agentApi.request("DELETE", "/device-connectors/upstream/dc");
    await streamThroughRt(s);
    const fh = await openFifoWriter(s.fifo("dc"));
    try {
      await writeNumbered(fh, 500, 510);
      await until(
        async () => (metric(await scrape(), "agent_points_received_total", { channel: "dc" }) ?? 0) >= before + 10,
        30_000,
        "the new points counted on top",
      );
    } finally {
      await fh.close();
    }
  }, 120_000);
});

describe("--metrics-listen", () => {
  it("serves GET /metrics on its own port from the edge-agent command, and nothing else there", async () => {
    const dir = await tempDir("agent-metrics-");
    const child = spawn(
      process.execPath,
      [
        path.resolve(import.meta.dirname, "../../../bin/edge-agent.mjs"),
        "--socket",
        path.join(dir, "agent.sock"),
        "--data",
        path.join(dir, "data"),
        "--metrics-listen",
        "127.0.0.1:0",
      ],
      {
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    try {
      let out = "";
      const url = await new Promise<string>((resolve, reject) => {
        child.stdout!.on("data", (c) => {
          out += String(c);
          const m = /"metrics":"(http:\/\/[^"]+)"/.exec(out);
          if (m) resolve(m[1]!);
        });
        child.stderr!.on("data", (c) => (out += String(c)));
        void exited.then(() => reject(new Error(`edge-agent exited: ${out}`)));
      });
      const r = await fetch(url);
      expect(r.status).toBe(200);
      const text = await r.text();
      expect(metric(text, "agent_queue_chunks")).toBe(0);
      expect(text).toContain("# TYPE agent_points_received_total counter");
      const other = await fetch(url.replace("/metrics", "/api/v1/upstreams"));
      expect(other.status).toBe(404);
      expect(await other.json()).toMatchObject({
        status: 404,
        title: "Resource is not found",
        instance: "/api/v1/upstreams",
      });
    } finally {
      child.kill("SIGTERM");
      await exited;
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it("refuses a malformed --metrics-listen with exit code 2", async () => {
    const child = spawn(
      process.execPath,
      [
        path.resolve(import.meta.dirname, "../../../bin/edge-agent.mjs"),
        "--socket",
        "/nonexistent/x.sock",
        "--metrics-listen",
        "localhost:http",
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let err = "";
    child.stderr!.on("data", (c) => (err += String(c)));
    const code = await new Promise<number | null>((resolve) => child.once("exit", (c) => resolve(c)));
    expect(code).toBe(2);
    expect(err).toContain('--metrics-listen / AGENT_METRICS_LISTEN "localhost:http": expected host:port');
  }, 120_000);

  it("AGENT_METRICS=off: no metrics at all (the bench's comparison), and no --metrics-listen with it", async () => {
    const dir = await tempDir("agent-metrics-off-");
    const bin = path.resolve(import.meta.dirname, "../../../bin/edge-agent.mjs");
    const socket = path.join(dir, "agent.sock");
    const child = spawn(process.execPath, [bin, "--socket", socket, "--data", path.join(dir, "data")], {
      stdio: "ignore",
      env: { ...process.env, AGENT_METRICS: "off" },
    });
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    try {
      const api = new ApiClient(socket);
      await until(
        async () => (await api.request("GET", "/version").catch(() => undefined))?.status === 200,
        30_000,
        "the agent's socket",
      );
      expect((await api.request("GET", "/metrics")).status).toBe(404);
    } finally {
      child.kill("SIGTERM");
      await exited;
      fs.rmSync(dir, { recursive: true, force: true });
    }
    for (const [env, message] of [
      [
        { AGENT_METRICS: "off", AGENT_METRICS_LISTEN: "127.0.0.1:0" },
        "AGENT_METRICS=off and --metrics-listen / AGENT_METRICS_LISTEN: nothing to serve",
      ],
      [{ AGENT_METRICS: "no" }, 'AGENT_METRICS "no": expected on or off'],
    ] as const) {
      const bad = spawn(process.execPath, [bin, "--socket", "/nonexistent/x.sock"], {
        stdio: ["ignore", "pipe", "pipe"],
        env: { ...process.env, ...env },
      });
      let err = "";
      bad.stderr!.on("data", (c) => (err += String(c)));
      expect(await new Promise<number | null>((resolve) => bad.once("exit", (c) => resolve(c)))).toBe(2);
      expect(err).toContain(message);
    }
  }, 120_000);
});
