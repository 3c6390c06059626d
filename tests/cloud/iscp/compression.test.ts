// iSCP compression over real sockets: what iscp-go sends with compression off is accepted on WebSocket and QUIC,
// and peers whose every message is compressed and decompressed by Go's compress/flate (framed as the published Go
// client frames them, tests/support/go-deflate) stream through the broker, acks and relayed chunks included.
import type { AddressInfo } from "node:net";
import WebSocket, { WebSocketServer } from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startIscpQuic } from "../../../cloud/iscp/broker/broker.js";
import { connectQuic } from "../../../proto/transport/quic/client.js";
import { connectWebSocket } from "../../../proto/transport/ws/client.js";
import type { MessageTransport } from "../../../proto/transport/message-transport.js";
import { encodeMessage, QoS, ResultCode } from "../../../proto/wire/message.js";
import { IscpClient } from "../../../runtime/iscp/iscp-client.js";
import type { ReceivedChunk } from "../../../runtime/iscp/downstream.js";
import {
  buildGoDeflate,
  goDeflatePeer,
  goFramedPeer,
  type GoDeflateOptions,
  type GoFramedPeer,
} from "../../support/go-deflate.js";
import { makeLocalhostCert, startTestBroker, TOKEN, waitFor, type TestBroker } from "../../support/iscp-broker.js";
import { ALL, connectReq } from "../../support/iscp-raw-peer.js";

const EDGE = "22222222-2222-4222-8222-222222222222";
let go: ReturnType<typeof buildGoDeflate>;
let b: TestBroker;
let quic: Awaited<ReturnType<typeof startIscpQuic>>;
let cert: string;

beforeAll(async () => {
  go = buildGoDeflate();
  const pair = makeLocalhostCert();
  cert = pair.cert;
  b = await startTestBroker();
  quic = await startIscpQuic({ ...b.broker.options, broker: b.broker, key: pair.key, cert });
});
afterAll(async () => {
  await b?.close();
  go?.cleanup();
});

const overWs =
  (query: string, o: Parameters<typeof connectWebSocket>[0] = { url: "" }) =>
  () =>
    connectWebSocket({ ...o, url: `${b.url}?${query}` });
const overQuic =
  (o: Partial<Parameters<typeof connectQuic>[0]> = {}) =>
  () =>
    connectQuic({ host: "127.0.0.1", port: quic.port, ca: cert, serverName: "localhost", ...o });

/** The status and body of a refused WebSocket upgrade. */
function refusal(url: string): Promise<[number, string]> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.on("error", () => {});
    ws.once("open", () => reject(new Error("upgrade accepted")));
    ws.once("unexpected-response", (_req, res) => {
      let body = "";
      res.on("data", (d: Buffer) => (body += d.toString()));
      res.on("end", () => resolve([res.statusCode ?? 0, body]));
    });
  });
}

/** Points from an upstream on `up` reach a downstream on `down`, and the upstream is acked. */
async function relays(
  up: () => Promise<MessageTransport>,
  down: () => Promise<MessageTransport>,
  node: string,
): Promise<void> {
  const viewer = await IscpClient.connect({ transport: down, token: TOKEN, nodeId: `viewer-${node}` });
  const edge = await IscpClient.connect({ transport: up, token: TOKEN, nodeId: node });
  try {
    const got: ReceivedChunk[] = [];
    (await viewer.openDownstream({ filters: [{ sourceNodeId: node, dataFilters: ALL }] })).onChunk((c) => got.push(c));
    const us = await edge.openUpstream({ sessionId: "s", qos: QoS.RELIABLE });
    for (let i = 1; i <= 10; i++) {
      us.write({ name: "v", type: "u8" }, [{ elapsedTime: i, payload: new Uint8Array(64).fill(i) }]);
      us.flush();
    }
    expect(await us.waitAcked(10_000)).toBe(true);
    await waitFor(() => got.length === 10, 30_000, "relayed chunks");
    expect([...got[9]!.groups[0]!.dataPoints[0]!.payload]).toEqual(Array(64).fill(10));
  } finally {
    await Promise.all([edge.close(), viewer.close()]);
  }
}

describe("compression negotiation", () => {
  it("accepts iscp-go's parameters with compression off (comp=context-takeover&clevel=0&cwinbits=0) on WebSocket and QUIC", async () => {
    const off = "comp=context-takeover&clevel=0&cwinbits=0";
    const quicOff = overQuic({ extraNegotiation: { comp: "context-takeover", clevel: "0", cwinbits: "0" } });
    await relays(overWs(off), quicOff, "edge-off");
  });

  it("refuses parameters no client sends with 400 and a title saying which", async () => {
    for (const [q, title] of [
      ["comp=gzip&clevel=6", "comp must be per-message or context-takeover"],
      ["comp=per-message&clevel=12", "clevel must be an integer from 0 to 9"],
      ["comp=per-message&clevel=6&clevel=7", "clevel must be given once"],
    ]) {
      expect(await refusal(`${b.url}?${q}`)).toEqual([400, title]);
    }
  });

  it("ends a connection whose message does not decompress", async () => {
    const ws = new WebSocket(`${b.url}?comp=per-message&clevel=6`);
    ws.on("error", () => {});
    await new Promise((r) => ws.once("open", r));
    const closed = new Promise<number>((r) => ws.once("close", (code) => r(code)));
    ws.send(Buffer.from([0xff, 0xff, 0xff, 0x00, 0x01])); // not a DEFLATE stream
    expect(await closed).toBe(1006);
  });

  it("closes a QUIC connection whose negotiation asks for a compression no client sends", async () => {
    const bad = overQuic({ extraNegotiation: { comp: "gzip", clevel: "6" } });
    await expect(
      IscpClient.connect({
        transport: bad,
        token: TOKEN,
        nodeId: "edge-bad",
        reconnect: false,
        requestTimeoutMs: 3000,
      }),
    ).rejects.toThrow();
  });

  it("our client compresses when asked: WebSocket with context takeover, QUIC per message (stream and datagrams)", async () => {
    const level = { level: 6, contextTakeover: true, windowBits: 12 };
    await relays(
      () => connectWebSocket({ url: b.url, compression: level }),
      overQuic({ compression: level }),
      "edge-ours",
    );
    // UNRELIABLE chunks travel on QUIC datagrams, each compressed alone.
    const viewer = await IscpClient.connect({
      transport: overQuic({ compression: level }),
      token: TOKEN,
      nodeId: "viewer-dg",
    });
    const edge = await IscpClient.connect({
      transport: overQuic({ compression: level }),
      token: TOKEN,
      nodeId: "edge-dg",
    });
    const got: ReceivedChunk[] = [];
    (
      await viewer.openDownstream({ qos: QoS.UNRELIABLE, filters: [{ sourceNodeId: "edge-dg", dataFilters: ALL }] })
    ).onChunk((c) => got.push(c));
    const us = await edge.openUpstream({ sessionId: "s", qos: QoS.UNRELIABLE });
    for (let i = 1; i <= 5; i++) {
      us.write({ name: "v", type: "u8" }, [{ elapsedTime: i, payload: new Uint8Array(2000).fill(7) }]);
      us.flush();
    }
    await waitFor(() => got.length >= 3, 30_000, "datagram chunks");
    expect(edge.transport.datagramStats!().sentMessages).toBeGreaterThanOrEqual(5);
    await Promise.all([edge.close(), viewer.close()]);
  });
});

describe("our client's compressed frames", () => {
  it("ask for compression in the URL as iscp-go does, and Go's reader reads them message after message", async () => {
    const server = new WebSocketServer({ port: 0, host: "127.0.0.1" });
    await new Promise((r) => server.once("listening", r));
    const peer = goDeflatePeer(go.bin, { transport: "ws", takeover: true, winbits: 12 });
    try {
      const seen = new Promise<{ query: string; frames: Buffer[] }>((resolve) =>
        server.once("connection", (ws, req) => {
          const frames: Buffer[] = [];
          ws.on(
            "message",
            (d) => frames.push(d as Buffer) === 3 && resolve({ query: new URL(req.url!, "http://x").search, frames }),
          );
        }),
      );
      const port = (server.address() as AddressInfo).port;
      const t = await connectWebSocket({
        url: `ws://127.0.0.1:${port}/api/iscp/connect`,
        compression: { level: 6, contextTakeover: true, windowBits: 12 },
      });
      const sent = [1, 2, 3].map((i) => encodeMessage(connectReq({ requestId: i }), "proto"));
      for (const m of sent) t.send(m);
      const { query, frames } = await seen;
      expect(query).toBe("?enc=proto&comp=context-takeover&clevel=6&cwinbits=12");
      for (let i = 0; i < 3; i++) expect(await peer.decompress(frames[i]!)).toEqual(Buffer.from(sent[i]!));
      expect(frames[2]!.length).toBeLessThan(sent[2]!.length); // the third refers back to the first two
      t.close();
    } finally {
      peer.close();
      server.close();
    }
  });
});

describe("peers compressing with Go's compress/flate as the published Go client does", () => {
  const cases: {
    name: string;
    up: [() => Promise<MessageTransport>, GoDeflateOptions];
    down: [() => Promise<MessageTransport>, GoDeflateOptions];
  }[] = [
    {
      name: "WebSocket, context takeover (cwinbits 15 and 10)",
      up: [overWs("comp=context-takeover&clevel=6&cwinbits=15"), { transport: "ws", takeover: true, winbits: 15 }],
      down: [
        overWs("comp=context-takeover&clevel=1&cwinbits=10"),
        { transport: "ws", takeover: true, winbits: 10, level: 1 },
      ],
    },
    {
      // iscp-go 0.9.0 to 1.0.0 keep the first 2^cwinbits bytes as the context: the broker finds it out.
      name: "WebSocket, context takeover keeping the first bytes (iscp-go before 1.1.0; cwinbits 10 and 9)",
      up: [
        overWs("comp=context-takeover&clevel=6&cwinbits=10"),
        { transport: "ws", takeover: true, winbits: 10, keepFirst: true },
      ],
      down: [
        overWs("comp=context-takeover&clevel=6&cwinbits=9"),
        { transport: "ws", takeover: true, winbits: 9, keepFirst: true },
      ],
    },
    {
      name: "QUIC, every message alone",
      up: [
        overQuic({ extraNegotiation: { comp: "context-takeover", clevel: "6", cwinbits: "15" } }),
        { transport: "quic" },
      ],
      down: [overQuic({ extraNegotiation: { comp: "per-message", clevel: "9" } }), { transport: "quic", level: 9 }],
    },
    {
      // What iscp-go 0.9.0 to 1.0.0 send and expect on QUIC: each message a zlib stream.
      name: "QUIC, each message a zlib stream (iscp-go before 1.1.0)",
      up: [
        overQuic({ extraNegotiation: { comp: "context-takeover", clevel: "6", cwinbits: "15" } }),
        { transport: "quic", zlib: true },
      ],
      down: [
        overQuic({ extraNegotiation: { comp: "context-takeover", clevel: "1", cwinbits: "15" } }),
        { transport: "quic", level: 1, zlib: true },
      ],
    },
  ];
  for (const c of cases) {
    it(`${c.name}: connect, upstream, acks and relayed chunks`, async () => {
      const peers: GoFramedPeer[] = [];
      const open = async ([t, o]: [() => Promise<MessageTransport>, GoDeflateOptions], nodeId: string) => {
        const p = goFramedPeer(await t(), goDeflatePeer(go.bin, o));
        peers.push(p);
        p.send(connectReq({ nodeId }));
        expect((await p.next("connectResponse")).connectResponse!.resultCode ?? 0).toBe(ResultCode.SUCCEEDED);
        return p;
      };
      try {
        const down = await open(c.down, "viewer-go");
        down.send({
          downstreamOpenRequest: {
            requestId: 2,
            desiredStreamIdAlias: 1,
            qos: QoS.RELIABLE,
            downstreamFilters: [{ sourceNodeId: EDGE, dataFilters: ALL }],
          },
        });
        expect((await down.next("downstreamOpenResponse")).downstreamOpenResponse!.resultCode ?? 0).toBe(
          ResultCode.SUCCEEDED,
        );
        const up = await open(c.up, EDGE);
        up.send({
          upstreamOpenRequest: { requestId: 2, sessionId: "s", ackInterval: 10, expiryInterval: 1, qos: QoS.RELIABLE },
        });
        const alias = (await up.next("upstreamOpenResponse")).upstreamOpenResponse!.assignedStreamIdAlias!;
        const record = (i: number) => Buffer.from(`{"lat":35.6${i},"lon":139.7${i},"speed":${i}}`.repeat(20));
        for (let seq = 1; seq <= 5; seq++)
          up.send({
            upstreamChunk: {
              streamIdAlias: alias,
              streamChunk: {
                sequenceNumber: seq,
                dataPointGroups: [
                  { dataId: { name: "gnss", type: "json" }, dataPoints: [{ elapsedTime: seq, payload: record(seq) }] },
                ],
              },
            },
          });
        const acked = new Set<number>();
        while (acked.size < 5)
          for (const r of (await up.next("upstreamChunkAck")).upstreamChunkAck!.results ?? [])
            acked.add(r.sequenceNumber!);
        for (let seq = 1; seq <= 5; seq++) {
          const chunk = (await down.next("downstreamChunk")).downstreamChunk!;
          const point = chunk.streamChunk!.dataPointGroups![0]!.dataPoints![0]!;
          expect(Buffer.from(point.payload!).toString()).toBe(record(Number(point.elapsedTime)).toString());
        }
        // The broker's frames really were DEFLATE streams: smaller than the repeated records they carry.
        expect(Math.max(...down.frames.map((f) => f.length))).toBeLessThan(record(5).length);
      } finally {
        for (const p of peers) p.close();
      }
    });
  }
});
