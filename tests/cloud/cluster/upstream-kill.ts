// The stream a kill -9 test runs: the agent's iSCP client (runtime/iscp) sends numbered points through a
// balancer as one RELIABLE, persisted upstream with acks batched over 5 s; once the first half is stored (and
// not acknowledged yet) the test's `kill` takes the peer away; the client reconnects through the balancer,
// resumes, sends the second half and closes. A stream that cannot be resumed is handled as a client does:
// a new stream carrying what was not acknowledged.
import { randomUUID } from "node:crypto";
import { IscpClient } from "../../../runtime/iscp/iscp-client.js";
import type { ClientUpstream, UpstreamOptions } from "../../../runtime/iscp/upstream.js";
import { connectWebSocket } from "../../../proto/transport/ws/client.js";
import { QoS } from "../../../proto/wire/message.js";
import type { Call } from "../accounts/helpers.js";
import { eventually } from "./helpers.js";

export const PROJECT = "00000000-0000-0000-0000-000000000000";

export interface KillRun {
  /** Payloads of the stored points, read over REST (`p0` … `p<n-1>`, each once when all went well). */
  payloads: string[];
  /** Upstreams the client could not resume (their errors). */
  lost: string[];
  ackedBeforeKill: number;
  /** The measurement's sequences (one per stream). */
  sequences: number;
}

/** The payloads stored for a measurement, through `read`. */
async function storedPayloads(read: Call, meas: string): Promise<string[]> {
  const res = await read(`/v1/projects/${PROJECT}/data?name=${meas}&time_format=ns`);
  if (res.status !== 200 || res.body === undefined) return [];
  const text = typeof res.body === "string" ? res.body : JSON.stringify(res.body) + "\n";
  const lines = text
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((l: string) => JSON.parse(l) as { data_id: string; data: { d?: string } });
  // A payload of a type the data endpoint does not decode comes as base64.
  return lines.filter((l) => l.data_id === "count").map((l) => Buffer.from(String(l.data.d), "base64").toString());
}

export async function streamThroughKill(o: {
  balancerUrl: string;
  token: string;
  nodeId: string;
  read: Call;
  points: number;
  kill: () => Promise<void>;
}): Promise<KillRun> {
  const client = await IscpClient.connect({
    transport: () => connectWebSocket({ url: `${o.balancerUrl.replace("http", "ws")}/api/iscp/connect` }),
    token: o.token,
    nodeId: o.nodeId,
    projectUuid: PROJECT,
    reconnectBaseMs: 50,
    reconnectMaxMs: 500,
  });
  try {
    // Set once the client has resumed (or given up) its streams on the new connection.
    let reconnected = false;
    client.onStateChange((state, why) => {
      if (state === "open" && why === "reconnected") reconnected = true;
    });
    const meas = randomUUID();
    const opts: UpstreamOptions = {
      sessionId: meas,
      qos: QoS.RELIABLE,
      persist: true,
      ackIntervalMs: 5_000,
      expiryIntervalSec: 60,
      closeTimeoutMs: 30_000,
    };
    const acked = new Set<number>();
    const lost: string[] = [];
    const payloadOf = new Map<number, number>();
    const open = async () => {
      const up = await client.openUpstream(opts);
      up.onAck((rs) => {
        for (const r of rs) if (r.resultCode === 0) acked.add(r.sequenceNumber);
      });
      up.onError((e) => lost.push(e.message));
      return up;
    };
    const writePoint = (u: ClientUpstream, i: number) => {
      u.write({ name: "count", type: "string" }, [
        { elapsedTime: BigInt(i) * 1_000_000n, payload: Buffer.from(`p${i}`) },
      ]);
      payloadOf.set(u.flush(), i);
    };
    let up = await open();
    const half = Math.floor(o.points / 2);
    for (let i = 0; i < half; i++) writePoint(up, i);
    await eventually(async () => (await storedPayloads(o.read, meas)).length >= half, 30_000, "the first half stored");
    const ackedBeforeKill = acked.size;
    await o.kill();
    await eventually(async () => reconnected, 60_000, "the client reconnected through the balancer");
    if (lost.length > 0) {
      const unacked = [...payloadOf].filter(([seq]) => !acked.has(seq)).map(([, i]) => i);
      up = await open();
      for (const i of unacked) writePoint(up, i);
    }
    for (let i = half; i < o.points; i++) writePoint(up, i);
    if (!(await up.waitAcked(30_000))) throw new Error("the second half was not acknowledged");
    await up.close({ closeSession: true });
    const seqs = await o.read(`/v1/projects/${PROJECT}/measurements/${meas}/sequences`);
    return {
      payloads: await storedPayloads(o.read, meas),
      lost,
      ackedBeforeKill,
      sequences: (seqs.body?.items ?? seqs.body ?? []).length,
    };
  } finally {
    await client.close().catch(() => undefined);
  }
}

/** The points missing from `payloads` and those stored more than once. */
export function missingAndTwice(payloads: string[], n: number): { missing: string[]; twice: string[] } {
  const counts = new Map<string, number>();
  for (const p of payloads) counts.set(p, (counts.get(p) ?? 0) + 1);
  const missing = Array.from({ length: n }, (_, i) => `p${i}`).filter((p) => !counts.has(p));
  return { missing, twice: [...counts].filter(([, c]) => c > 1).map(([p]) => p) };
}
