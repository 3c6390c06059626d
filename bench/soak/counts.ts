// What the soak counts: the points the agent accepted from its FIFO (its metrics, summed over its lives: a
// restart starts its counters at 0), and at the end every point the cloud holds, read back through its REST
// API and told apart by the sequence number the connector writes in each payload (u64 big-endian, bytes 0..8).
import type { ApiClient } from "../../runtime/cli/client.js";

/** The value of an agent metric's series (`name{labels} value`), undefined when absent. */
export function metricValue(text: string, series: string): number | undefined {
  for (const line of text.split("\n")) if (line.startsWith(`${series} `)) return Number(line.slice(series.length + 1));
  return undefined;
}

export class AcceptedCounter {
  private byPid = new Map<number, number>();

  /** Reads the agent's count of points taken from its FIFO; false when the agent did not answer. */
  async read(
    pid: number | undefined,
    api: ApiClient | undefined,
  ): Promise<{ received: number; queueChunks: number } | undefined> {
    if (pid === undefined || !api) return undefined;
    const r = await api.request("GET", "/metrics").catch(() => undefined);
    if (r?.status !== 200) return undefined;
    const text = String(r.body);
    const received = metricValue(text, 'agent_points_received_total{channel="bench"}') ?? 0;
    this.byPid.set(pid, Math.max(received, this.byPid.get(pid) ?? 0));
    return { received, queueChunks: metricValue(text, "agent_queue_chunks") ?? 0 };
  }

  get total(): number {
    let n = 0;
    for (const v of this.byPid.values()) n += v;
    return n;
  }
}

export interface StoredCounts {
  /** Distinct sequence numbers stored. */
  stored: number;
  /** Points stored more than once (each extra copy counts). */
  duplicated: number;
  /** Stored points whose sequence number the connector never wrote. */
  unknown: number;
  /** The lowest sequence numbers missing (at most 10), for the report. */
  firstMissing: number[];
}

/** Every point of `edgeUuid` in the cloud, counted against the `sent` sequence numbers 0..sent-1. */
export async function readBack(o: {
  url: string;
  token: string;
  projectUuid: string;
  edgeUuid: string;
  sent: number;
}): Promise<StoredCounts> {
  const seen = new Uint8Array(o.sent);
  let duplicated = 0;
  let unknown = 0;
  const res = await fetch(`${o.url}/api/v1/projects/${o.projectUuid}/data?name=${o.edgeUuid}&time_format=ns`, {
    headers: { "X-Intdash-Token": o.token },
  });
  if (res.status !== 200 || !res.body) throw new Error(`GET data: ${res.status} ${await res.text()}`);
  const take = (line: string) => {
    if (line === "") return;
    const d = (JSON.parse(line) as { data?: { d?: string } }).data?.d;
    const b = d === undefined ? undefined : Buffer.from(d, "base64");
    if (!b || b.length < 8) return void unknown++;
    const seq = b.readUInt32BE(0) * 2 ** 32 + b.readUInt32BE(4);
    if (seq >= o.sent) return void unknown++;
    if (seen[seq]! > 0) duplicated++;
    if (seen[seq]! < 255) seen[seq] = seen[seq]! + 1;
  };
  const decoder = new TextDecoder();
  let rest = "";
  for await (const chunk of res.body) {
    const lines = (rest + decoder.decode(chunk as Uint8Array, { stream: true })).split("\n");
    rest = lines.pop()!;
    lines.forEach(take);
  }
  take(rest);
  let stored = 0;
  const firstMissing: number[] = [];
  for (let i = 0; i < o.sent; i++) {
    if (seen[i]! > 0) stored++;
    else if (firstMissing.length < 10) firstMissing.push(i);
  }
  return { stored, duplicated, unknown, firstMissing };
}
