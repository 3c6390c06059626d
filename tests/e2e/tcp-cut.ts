// A TCP relay between the agent and the cloud that a test can cut, as a network outage would: open
// connections die, new ones go through again.
import net from "node:net";
import { startStack, streamThroughRt, type Stack, type StackOptions } from "./stack.js";

export interface TcpRelay {
  url: string;
  /** Destroys every open connection (both sides). */
  cut(): void;
  /**
   * Cuts as cut() does the moment a client next sends a request line starting with `requestLine` (e.g.
   * "POST /api/auth/oauth2/token"): that request dies with the others. Resolves once it has cut.
   */
  cutAtRequest(requestLine: string): Promise<void>;
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
  let cutAt: { line: Buffer; done: () => void } | undefined;
  const cut = () => {
    for (const s of open) s.destroy();
  };
  const server = net.createServer((client) => {
    if (refusing) return void client.destroy();
    accepted++;
    const upstream = net.connect(targetPort, "127.0.0.1");
    clients.set(client, upstream);
    client.on("close", () => clients.delete(client));
    // Before the pipe's own listener, so that the request is cut before it is forwarded.
    client.on("data", (chunk: Buffer) => {
      if (!cutAt || !chunk.subarray(0, cutAt.line.length).equals(cutAt.line)) return;
      const { done } = cutAt;
      cutAt = undefined;
      cut();
      done();
    });
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
    cut,
    cutAtRequest: (requestLine) =>
      new Promise<void>((done) => {
        cutAt = { line: Buffer.from(requestLine), done };
      }),
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
