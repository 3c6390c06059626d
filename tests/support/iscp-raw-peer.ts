// A raw WebSocket iSCP peer for broker tests: sends any message, records every received one
// (with its frame size) so a test can wait for a kind and inspect exactly what the broker sent.
import WebSocket from "ws";
import { decodeMessage, encodeMessage, iscp2, type Message } from "../../proto/wire/message.js";
import { TOKEN, waitFor, type TestBroker } from "./iscp-broker.js";

export const NODE_U = "11111111-1111-4111-8111-111111111111";
export const ALL = [{ name: "#", type: "#" }];

export interface Raw {
  ws: WebSocket;
  msgs: iscp2.Message[];
  /** Byte length of each received frame, by message. */
  sizes: Map<iscp2.Message, number>;
  texts: number;
  send(m: Message): void;
  next(kind: string, timeoutMs?: number): Promise<iscp2.Message>;
  closed: Promise<void>;
}

export async function raw(b: TestBroker, query = "enc=proto"): Promise<Raw> {
  const ws = new WebSocket(`${b.url}?${query}`);
  const msgs: iscp2.Message[] = [];
  const sizes = new Map<iscp2.Message, number>();
  const r: Raw = {
    ws,
    msgs,
    sizes,
    texts: 0,
    send: (m) => ws.send(encodeMessage(m, "proto")),
    async next(kind, timeoutMs = 3000) {
      let m: iscp2.Message | undefined;
      await waitFor(() => (m = msgs.find((x) => x.message === kind)) !== undefined, timeoutMs, kind);
      msgs.splice(msgs.indexOf(m!), 1);
      return m!;
    },
    closed: new Promise((res) => ws.once("close", () => res())),
  };
  ws.on("message", (d, isBinary) => {
    if (!isBinary) return void r.texts++;
    const m = decodeMessage(d as Buffer, "proto");
    sizes.set(m, (d as Buffer).length);
    msgs.push(m);
  });
  ws.on("error", () => {});
  await new Promise<void>((res, rej) => {
    ws.once("open", () => res());
    ws.once("unexpected-response", (_q, resp) => rej(new Error(`HTTP ${resp.statusCode}`)));
  });
  return r;
}

export const connectReq = (o: Partial<iscp2.IConnectRequest> = {}): Message => ({
  connectRequest: {
    requestId: 0,
    protocolVersion: "2.0.0",
    nodeId: NODE_U,
    pingInterval: 10,
    pingTimeout: 1,
    extensionFields: { accessToken: TOKEN },
    ...o,
  },
});

/** A raw peer past a successful Connect. */
export async function connected(b: TestBroker, o: Partial<iscp2.IConnectRequest> = {}): Promise<Raw> {
  const r = await raw(b);
  r.send(connectReq(o));
  const resp = (await r.next("connectResponse")).connectResponse!;
  if ((resp.resultCode ?? 0) !== 0) throw new Error(`connect refused: ${resp.resultCode}`);
  return r;
}
