// The downstream viewer: an iSCP client (WebSocket) of a second edge of the project, subscribed to the agent's
// points, as a live dashboard would be. It notes when live data arrives (a point written by the connector at
// most FRESH_MS ago, from the --stamp in its payload) and keeps every gap between live arrivals longer than
// GAP_MS, from which the live gap after each fault is read. It connects again by itself whenever it is cut.
import { connectWebSocket } from "../../proto/transport/ws/client.js";
import type { CloudInfo } from "../../runtime/device-bench/cloud-peer.js";
import { monoNs, stampOf } from "../../runtime/device-bench/latency.js";
import { fetchToken } from "../../runtime/deferred/cloud-auth.js";
import { IscpClient } from "../../runtime/iscp/iscp-client.js";

/** A point is live when it arrives at most this long after the connector wrote it. */
export const FRESH_MS = 2000;
/** Shorter pauses between live points are not gaps. */
const GAP_MS = 500;

export interface EdgeCreds {
  uuid: string;
  secret: string;
}

/** A second edge in the bench's project, to read its points downstream. */
export async function makeViewerEdge(info: CloudInfo): Promise<EdgeCreds> {
  const post = async (p: string, json: unknown) => {
    const res = await fetch(`${info.url}/api${p}`, {
      method: "POST",
      headers: { "X-Intdash-Token": info.token, "content-type": "application/json" },
      body: JSON.stringify(json),
    });
    if (res.status >= 400) throw new Error(`POST ${p}: ${res.status} ${await res.text()}`);
    return (await res.json()) as Record<string, string>;
  };
  const edge = await post("/auth/edges", { name: "soak-viewer", nickname: "Soak viewer" });
  await post(`/auth/projects/${info.projectUuid}/edges`, { edge_name: edge.name, nickname: "Soak viewer" });
  return { uuid: edge.uuid!, secret: edge.client_secret! };
}

export class Viewer {
  /** [from, to] (CLOCK_MONOTONIC ns) of every pause between live arrivals longer than GAP_MS. */
  readonly gaps: Array<[number, number]> = [];
  lastLiveNs: number;
  received = 0;
  connects = 0;
  private client: IscpClient | undefined;
  private closed = false;

  constructor(
    private readonly o: { url: string; ca: string; projectUuid: string; viewer: EdgeCreds; sourceEdge: string },
  ) {
    this.lastLiveNs = monoNs();
  }

  start(): void {
    void this.loop();
  }

  private async loop(): Promise<void> {
    while (!this.closed) {
      try {
        await this.session();
      } catch {
        // the cloud is away: try again shortly
      }
      if (!this.closed) await new Promise((r) => setTimeout(r, 250));
    }
  }

  /** One connection: resolves when it is lost. */
  private async session(): Promise<void> {
    const { url, projectUuid, viewer } = this.o;
    const token = await fetchToken({
      server_url: url,
      project_uuid: projectUuid,
      edge_uuid: viewer.uuid,
      client_secret: viewer.secret,
    });
    const client = await IscpClient.connect({
      transport: () => connectWebSocket({ url: `${url.replace(/^http/, "ws")}/api/iscp/connect`, ca: this.o.ca }),
      token: token.accessToken,
      nodeId: viewer.uuid,
      projectUuid,
      reconnect: false,
      pingIntervalSec: 2,
      pingTimeoutSec: 4,
    });
    this.client = client;
    const lost = new Promise<void>((resolve) => client.onStateChange((s) => s === "closed" && resolve()));
    try {
      const ds = await client.openDownstream({
        filters: [{ sourceNodeId: this.o.sourceEdge, dataFilters: [{ name: "sample/counter", type: "bytes" }] }],
      });
      this.connects++;
      ds.onChunk((c) => {
        const now = monoNs();
        for (const g of c.groups)
          for (const p of g.dataPoints) {
            this.received++;
            const stamp = stampOf(p.payload);
            if (stamp === undefined || now - stamp > FRESH_MS * 1e6) continue;
            if (now - this.lastLiveNs > GAP_MS * 1e6) this.gaps.push([this.lastLiveNs, now]);
            this.lastLiveNs = now;
          }
      });
      if (this.closed) return;
      await lost;
    } finally {
      await client.close().catch(() => undefined);
    }
  }

  /**
   * How long after `endNs` live data came back: 0 when it was flowing at `endNs`, undefined when none has
   * come since (the gap has not closed).
   */
  liveGapAfter(endNs: number): number | undefined {
    if (this.lastLiveNs < endNs) return undefined;
    const g = this.gaps.find(([from, to]) => from <= endNs && endNs < to);
    return g ? g[1] - endNs : 0;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.client?.close().catch(() => undefined);
  }
}
