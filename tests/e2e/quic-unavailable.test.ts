// A platform without the QUIC library (no build of @matrixai/quic for linux-arm64; the package is an
// optional dependency): the child processes here cannot resolve it. The agent still starts and streams
// over WebSocket, an upstream set to QUIC shows a clear error state, and a cloud peer asked to listen on
// QUIC stops at startup with a clear message.
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { cloudIndices, range, writeNumbered } from "./points.js";
import { openFifoWriter, startStack, streamThroughRt, until, type Stack } from "./stack.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const HIDE_QUIC = ["--import", path.join(ROOT, "tests/support/hide-quic.mjs")];
const PLATFORM = `${process.platform}-${process.arch}`;

let s: Stack;
beforeAll(async () => {
  s = await startStack({ agent: "child", agentNodeArgs: HIDE_QUIC });
  await s.connect("websocket");
  await streamThroughRt(s);
}, 120_000);
afterAll(async () => s?.close());

const state = async () => (await s.agentApi.get<{ code: string; error: string }>("/upstreams/rt/state")).body;

it("streams over WebSocket, then shows a clear error state when the transport is set to QUIC", async () => {
  await until(
    async () => ["quiet", "connected"].includes((await state()).code),
    30_000,
    "upstream open over WebSocket",
  );
  const fh = await openFifoWriter(s.fifo("dc"));
  try {
    await writeNumbered(fh, 0, 50, { size: 32 });
    await until(async () => (await cloudIndices(s)).length === 50, 30_000, "50 points over WebSocket");
    expect(await cloudIndices(s)).toEqual(range(0, 50));

    const r = await s.agentApi.request("PATCH", "/transport", { protocol: "quic" });
    expect(r.status).toBe(200);
    const failed = await until(
      async () => {
        const st = await state();
        return st.code === "error" && st;
      },
      30_000,
      "error state over QUIC",
    );
    expect(failed.error).toBe(`transport: QUIC is not available on this platform (${PLATFORM})`);
    expect(s.child!.exitCode).toBeNull();

    // Back on WebSocket the same upstream streams again.
    await s.agentApi.request("PATCH", "/transport", { protocol: "websocket" });
    await writeNumbered(fh, 50, 100, { size: 32 });
  } finally {
    await fh.close();
  }
  await until(async () => (await cloudIndices(s)).length === 100, 30_000, "100 points over WebSocket");
}, 120_000);

it("refuses to start a cloud peer listening on QUIC, with a clear message", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "quic-unavailable-"));
  try {
    const args = [
      ...HIDE_QUIC,
      path.join(ROOT, "bin/cloud-peer.mjs"),
      "--listen",
      "127.0.0.1:0",
      "--data",
      dir,
      "--iscp-quic-listen",
      "127.0.0.1:0",
      "--log-level",
      "silent",
    ];
    const r = await new Promise<{ code: number; stderr: string }>((resolve) =>
      execFile(
        process.execPath,
        args,
        { env: { ...process.env, CLOUD_ADMIN_PASSWORD: "Unavailable-Quic-1" }, timeout: 60_000 },
        (err, _out, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stderr }),
      ),
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `cloud-peer: --iscp-quic-listen (CLOUD_ISCP_QUIC_LISTEN): QUIC is not available on this platform (${PLATFORM}); leave it unset to serve iSCP over WebSocket only\n`,
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}, 120_000);
