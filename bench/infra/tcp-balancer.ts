// A small TCP balancer for multi-instance tests and benches: each new connection goes to the next live backend
// (round-robin), or to the one a test picks with `only()`. Bytes are piped both ways untouched, so HTTP,
// WebSocket upgrades and long-lived iSCP connections pass as they would through a real TCP balancer.
import net from "node:net";

export interface TcpBalancer {
  port: number;
  url: string;
  /** Sends new connections to these backends only (ports); undefined: round-robin over all. */
  only(ports?: number[]): void;
  setBackends(ports: number[]): void;
  /** Connections made so far, per backend port. */
  counts(): Map<number, number>;
  /** Cuts every open connection, both ways (a network failure); new connections are still taken. */
  cut(): void;
  /** While true, new connections are closed at once (the cloud unreachable); open ones are left alone. */
  refuse(on: boolean): void;
  close(): Promise<void>;
}

export async function startTcpBalancer(backends: number[]): Promise<TcpBalancer> {
  let all = [...backends];
  let chosen: number[] | undefined;
  let next = 0;
  const counts = new Map<number, number>();
  const sockets = new Set<net.Socket>();
  let refusing = false;
  const server = net.createServer((client) => {
    if (refusing) return void client.destroy();
    const pool = chosen ?? all;
    const port = pool[next++ % pool.length]!;
    counts.set(port, (counts.get(port) ?? 0) + 1);
    const upstream = net.connect(port, "127.0.0.1");
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.once("close", () => sockets.delete(s));
      s.on("error", () => {});
    }
    client.pipe(upstream);
    upstream.pipe(client);
    // A backend that dies cuts its clients, as a real balancer's connection would be cut.
    upstream.once("close", () => client.destroy());
    client.once("close", () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    only: (ports) => void (chosen = ports),
    setBackends: (ports) => void (all = [...ports]),
    counts: () => new Map(counts),
    cut: () => {
      for (const s of sockets) s.destroy();
    },
    refuse: (on) => void (refusing = on),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
