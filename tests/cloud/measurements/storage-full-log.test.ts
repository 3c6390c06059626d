// A full disk refuses real-time chunks (PROCESS_FAILED, the agent keeps them): the peer's log says so at
// warn once per episode, not once per chunk, and at info once chunks are stored again.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { QoS } from "../../../proto/wire/message.js";
import { IscpClient } from "../../../runtime/iscp/iscp-client.js";
import type { AckResult, ClientUpstream } from "../../../runtime/iscp/upstream.js";
import { connectWebSocket } from "../../../proto/transport/ws/client.js";
import { startTestPeer, type TestPeer } from "../harness.js";
import { edgeToken, makeEdge } from "../org/helpers.js";
import { DEFAULT_PROJECT, adminToken, caller, uuid } from "./helpers.js";

const WARN = 40;
const INFO = 30;

describe("measurements: the storage full in real time", () => {
  let dir: string;
  let peer: TestPeer;
  let client: IscpClient;
  const lines: Array<{ level: number; msg: string }> = [];

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "storage-full-log-"));
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const l of chunk.toString().split("\n"))
          if (l.trim() !== "") lines.push(JSON.parse(l) as { level: number; msg: string });
        done();
      },
    });
    peer = await startTestPeer({ dataDir: dir, config: { logLevel: "info" }, logDestination: sink });
    const admin = caller(peer, await adminToken(peer));
    const e = await makeEdge(admin, "full-edge");
    client = await IscpClient.connect({
      transport: () => connectWebSocket({ url: `${peer.url.replace("http", "ws")}/api/iscp/connect` }),
      token: (await edgeToken(peer, e)).body.access_token,
      nodeId: e.uuid,
      projectUuid: DEFAULT_PROJECT,
    });
  });
  afterAll(async () => {
    await client?.close();
    await peer?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Sends `n` chunks of one point each (large ones go to payload files) and waits for their acks. */
  async function send(up: ClientUpstream, acks: AckResult[], n: number, size = 64 * 1024): Promise<AckResult[]> {
    const before = acks.length;
    for (let i = 0; i < n; i++) {
      up.write({ name: "big", type: "bytes" }, [
        { elapsedTime: BigInt(before + i) * 1000n, payload: new Uint8Array(size).fill(i) },
      ]);
      up.flush();
    }
    const end = Date.now() + 15_000;
    while (acks.length < before + n && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    return acks.slice(before);
  }

  const full = () => lines.filter((l) => l.level === WARN && /storage full/.test(l.msg));
  const recovered = () => lines.filter((l) => l.level === INFO && /storage has room again/.test(l.msg));

  it("logs one warn line per episode however many chunks it refuses, and one info line when chunks are stored again", async () => {
    const session = uuid();
    const up = await client.openUpstream({ sessionId: session, persist: true, qos: QoS.RELIABLE });
    const acks: AckResult[] = [];
    up.onAck((r) => acks.push(...r));
    expect((await send(up, acks, 1, 100)).map((a) => a.resultCode)).toEqual([0]); // small: stored in its row
    const { id } = (await peer.svc.db.get<{ id: number }>("SELECT id FROM meas_sequences WHERE measurement_uuid = ?", [
      session,
    ]))!;
    // The sequence's payload file on a device that is always full (ENOSPC on every write).
    const file = path.join(dir, "chunks", `${id}.chunks`);
    fs.symlinkSync("/dev/full", file);

    const refused = await send(up, acks, 20);
    expect(refused).toHaveLength(20);
    expect(refused.every((a) => a.resultCode !== 0 && /storage is full/.test(a.resultString))).toBe(true);
    expect(full()).toHaveLength(1);
    expect(recovered()).toHaveLength(0);

    fs.unlinkSync(file);
    expect((await send(up, acks, 5)).map((a) => a.resultCode)).toEqual([0, 0, 0, 0, 0]);
    expect(full()).toHaveLength(1);
    expect(recovered()).toHaveLength(1);

    // A second episode is told again.
    await peer.svc.measurements.measurements.files.close(); // its write handle is closed: the next write opens the path
    fs.renameSync(file, `${file}.kept`);
    fs.symlinkSync("/dev/full", file);
    expect((await send(up, acks, 3)).every((a) => a.resultCode !== 0)).toBe(true);
    expect(full()).toHaveLength(2);
  }, 120_000);
});
