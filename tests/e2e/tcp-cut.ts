// A TCP relay between the agent and the cloud that a test can cut, as a network outage would: open
// connections die, new ones go through again.
import net from "node:net";
import { startStack, streamThroughRt, type Stack, type StackOptions } from "./stack.js";

export interface TcpRelay {
  url: string;
  /** Destroys every open connection (both sides). */
  cut(): void;
  /** From now on what the clients of open connections send is silently lost (a dead link), until cut(). */
  blackhole(): void;
  /** While true, new connections are closed at once (the cloud unreachable); open ones are left alone. */
  refuse(on: boolean): void;
  /** Connections relayed so far. */
  readonly accepted: number;
  close(): Promise<void>;
}

export async function startTcpRelay(targetPort: number): Promise<TcpRelay> {
  const open = new Set<net.Socket>();
  const clients = new Map<net.Socket, net.Socket>();
  let accepted = 0;
  let refusing = false;
  const server = net.createServer((client) => {
    if (refusing) return void client.destroy();
    accepted++;
    const upstream = net.connect(targetPort, "127.0.0.1");
    clients.set(client, upstream);
    client.on("close", () => clients.delete(client));
    for (const [a, b] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      open.add(a);
      a.pipe(b);
      a.on("error", () => b.destroy());
      a.on("close", () => {
        open.delete(a);
        b.destroy();
      });
    }
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    cut: () => {
      for (const s of open) s.destroy();
    },
    blackhole: () => {
      for (const [client, upstream] of clients) {
        client.unpipe(upstream);
        client.on("data", () => {}); // read and dropped
      }
    },
    refuse: (on) => {
      refusing = on;
    },
    get accepted() {
      return accepted;
    },
    close: () =>
      new Promise<void>((r) => {
        for (const s of open) s.destroy();
        server.close(() => r());
      }),
  };
}

/** A stack whose agent reaches the cloud through a relay, streaming the connector "dc" through "rt". */
export async function startStackBehindRelay(opts: StackOptions = {}): Promise<{ s: Stack; relay: TcpRelay }> {
  const s = await startStack(opts);
  let relay: TcpRelay | undefined;
  try {
    relay = await startTcpRelay(Number(new URL(s.peer.url).port));
    await s.connect();
    await s.agentApi.patch("/connection", { server_url: relay.url });
    await streamThroughRt(s);
    return { s, relay };
  } catch (e) {
    await s.close();
    await relay?.close();
    throw e;
  }
}
