// The cluster bus over NATS core (no JetStream): publish/subscribe with no echo of our own messages.
// The client reconnects for ever; while it is away readiness says so, and when it is back every
// registered cache reloads from the database, since notices sent meanwhile are gone.
import { connect, Events, type NatsConnection } from "nats";
import type { BusHandler, ClusterBus } from "./bus.js";

export interface NatsBusOptions {
  servers: string;
  instanceId: string;
  /** How long the first connection may take before the start fails. */
  connectTimeoutMs?: number;
  onWarn?: (msg: string) => void;
}

/** NATS URLs without any user:password part, for messages. */
const safeServers = (servers: string) =>
  servers
    .split(",")
    .map((s) => s.trim().replace(/\/\/[^@/]*@/, "//"))
    .join(",");

export class NatsBus implements ClusterBus {
  readonly kind = "nats" as const;
  private connected = true;
  private readonly resync: Array<() => void> = [];

  private constructor(
    private readonly nc: NatsConnection,
    readonly instanceId: string,
    private readonly servers: string,
    private readonly onWarn: (msg: string) => void,
  ) {
    void (async () => {
      for await (const s of nc.status()) {
        if (s.type === Events.Disconnect) {
          this.connected = false;
          onWarn(`NATS connection lost (${safeServers(servers)}); reconnecting`);
        } else if (s.type === Events.Reconnect) {
          this.connected = true;
          onWarn("NATS connection back; caches reload from the database");
          for (const fn of this.resync) fn();
        }
      }
    })();
  }

  static async open(o: NatsBusOptions): Promise<NatsBus> {
    const servers = o.servers.split(",").map((s) => s.trim());
    let nc: NatsConnection;
    try {
      nc = await connect({
        servers,
        name: `cloud-peer ${o.instanceId}`,
        noEcho: true,
        maxReconnectAttempts: -1,
        reconnectTimeWait: 500,
        timeout: o.connectTimeoutMs ?? 5_000,
        pingInterval: 5_000,
        maxPingOut: 2,
      });
    } catch (e) {
      throw new Error(`--nats (CLOUD_NATS): cannot connect to ${safeServers(o.servers)}: ${(e as Error).message}`);
    }
    return new NatsBus(nc, o.instanceId, o.servers, o.onWarn ?? (() => {}));
  }

  publish(subject: string, data: Uint8Array): void {
    // While reconnecting the client buffers (bounded); a closed connection throws, and a lost notice is
    // covered by the reload on reconnect.
    try {
      this.nc.publish(subject, data);
    } catch {
      /* reported by status() */
    }
  }

  /** A message a handler cannot read (another version's, or garbled) is dropped with a warning, never thrown into the client. */
  private guard(subject: string, fn: () => void): void {
    try {
      fn();
    } catch (e) {
      this.onWarn(`NATS message on ${subject} not understood, dropped: ${(e as Error).message}`);
    }
  }

  subscribe(subject: string, handler: BusHandler): () => void {
    const sub = this.nc.subscribe(subject, {
      callback: (err, msg) => {
        if (!err) this.guard(subject, () => handler(msg.data, msg.subject));
      },
    });
    return () => sub.unsubscribe();
  }

  async request(subject: string, data: Uint8Array, timeoutMs: number): Promise<Uint8Array | undefined> {
    // No responders, a timeout or a lost connection all mean the same here: nobody answered.
    return this.nc.request(subject, data, { timeout: timeoutMs }).then(
      (m) => m.data,
      () => undefined,
    );
  }

  serve(subject: string, handler: (data: Uint8Array) => Uint8Array | undefined): () => void {
    const sub = this.nc.subscribe(subject, {
      callback: (err, msg) => {
        if (err) return;
        this.guard(subject, () => {
          const answer = handler(msg.data);
          if (answer) msg.respond(answer);
        });
      },
    });
    return () => sub.unsubscribe();
  }

  onResync(fn: () => void): void {
    this.resync.push(fn);
  }

  status(): string {
    if (this.nc.isClosed()) return `the NATS connection is closed (${safeServers(this.servers)})`;
    return this.connected ? "ok" : `NATS is unreachable (${safeServers(this.servers)}); reconnecting`;
  }

  async close(): Promise<void> {
    if (this.nc.isClosed()) return;
    await this.nc.drain().catch(() => this.nc.close());
  }
}
