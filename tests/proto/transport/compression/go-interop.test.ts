// iSCP's per-message DEFLATE against Go's compress/flate framed as the published Go client frames it
// (tests/support/go-deflate): what we compress, Go decompresses to the same bytes, and what Go compresses, we do,
// message after message, so the context each side keeps (the last 2^cwinbits bytes) stays the same; and the framing
// and context of iscp-go before 1.1.0 (zlib streams on QUIC, the first 2^cwinbits bytes as the context).
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import zlib from "node:zlib";
import {
  isZlibFramed,
  MessageDeflater,
  MessageInflater,
} from "../../../../proto/transport/compression/message-deflate.js";
import { readCompression, type CompressionParams } from "../../../../proto/transport/compression/negotiation.js";
import { decodeMessage, encodeMessage } from "../../../../proto/wire/message.js";
import { buildGoDeflate, goDeflatePeer } from "../../../support/go-deflate.js";

let go: ReturnType<typeof buildGoDeflate>;
beforeAll(() => {
  go = buildGoDeflate();
});
afterAll(() => go.cleanup());

/** Messages that refer back to earlier ones (repeated records), one larger than any window, and random bytes. */
function messages(): Buffer[] {
  const record = (i: number) =>
    Buffer.from(`{"name":"sensor/${i % 4}","type":"float64","value":${(i * 0.25).toFixed(2)}}`);
  const out: Buffer[] = [];
  for (let i = 0; i < 40; i++) out.push(Buffer.concat([record(i), record(i + 1)]));
  out.push(Buffer.concat(Array.from({ length: 2000 }, (_, i) => record(i)))); // ~100 KB
  out.push(randomBytes(3000), Buffer.from([1]), record(7));
  return out;
}

const CASES: { name: string; params: CompressionParams; go: Parameters<typeof goDeflatePeer>[1] }[] = [
  {
    name: "WebSocket context takeover, cwinbits 15",
    params: { level: 6, contextTakeover: true, windowBits: 15 },
    go: { transport: "ws", takeover: true, winbits: 15 },
  },
  {
    name: "WebSocket context takeover, cwinbits 9 (iscp-rs's smallest)",
    params: { level: 9, contextTakeover: true, windowBits: 9 },
    go: { transport: "ws", takeover: true, winbits: 9, level: 9 },
  },
  {
    name: "WebSocket context takeover, cwinbits 0 (a one-byte context)",
    params: { level: 1, contextTakeover: true, windowBits: 0 },
    go: { transport: "ws", takeover: true, winbits: 0, level: 1 },
  },
  {
    name: "WebSocket context takeover, cwinbits 20 (more than DEFLATE reaches)",
    params: { level: 6, contextTakeover: true, windowBits: 20 },
    go: { transport: "ws", takeover: true, winbits: 20 },
  },
  {
    name: "WebSocket per-message",
    params: { level: 6, contextTakeover: false, windowBits: 15 },
    go: { transport: "ws" },
  },
  {
    name: "QUIC (every message alone)",
    params: { level: 6, contextTakeover: false, windowBits: 15 },
    go: { transport: "quic" },
  },
];

describe("per-message DEFLATE against Go's compress/flate", () => {
  for (const c of CASES) {
    it(`${c.name}: Go reads ours and we read Go's`, async () => {
      const peer = goDeflatePeer(go.bin, c.go);
      try {
        const ours = new MessageDeflater(c.params);
        const theirs = new MessageInflater(c.params, 1 << 20);
        for (const m of messages()) {
          const sent = ours.deflate(m);
          expect(await peer.decompress(sent)).toEqual(m);
          const received = await peer.compress(m);
          expect(theirs.inflate(received)).toEqual(m);
        }
      } finally {
        peer.close();
      }
    });
  }

  it("QUIC framed as zlib streams (iscp-go before 1.1.0): we read Go's zlib frames and answer in zlib frames Go reads", async () => {
    const params: CompressionParams = { level: 6, contextTakeover: false, windowBits: 15 };
    const peer = goDeflatePeer(go.bin, { transport: "quic", zlib: true });
    try {
      const ours = new MessageDeflater(params);
      const theirs = new MessageInflater(params, 1 << 20);
      for (const m of messages()) {
        const received = await peer.compress(m);
        expect(received.subarray(0, 1)).toEqual(Buffer.from([0x78]));
        expect(theirs.inflate(received)).toEqual(m);
        expect(theirs.zlibFramed).toBe(true);
        // compressed-transport.ts switches the answering side once the peer's frames came as zlib streams.
        ours.zlibFramed = theirs.zlibFramed;
        expect(await peer.decompress(ours.deflate(m))).toEqual(m);
      }
    } finally {
      peer.close();
    }
  });

  /** A client's first messages and then chunks of JSON records, several times any window here. */
  const iscpMessages = () => [
    encodeMessage(
      { connectRequest: { requestId: 1, protocolVersion: "2.0.0", nodeId: "n", pingInterval: 10 } },
      "proto",
    ),
    ...Array.from({ length: 60 }, (_, i) =>
      encodeMessage(
        {
          upstreamChunk: {
            streamIdAlias: 1,
            streamChunk: {
              sequenceNumber: i + 1,
              dataPointGroups: [
                {
                  dataIdAlias: 1,
                  dataPoints: [
                    { elapsedTime: i, payload: Buffer.from(`{"speed":${i % 50},"rpm":${1000 + i}}`.repeat(40)) },
                  ],
                },
              ],
            },
          },
        },
        "proto",
      ),
    ),
  ];
  const isMessage = (b: Buffer) => {
    try {
      decodeMessage(b, "proto");
      return true;
    } catch {
      return false;
    }
  };
  for (const [name, winbits, keepFirst] of [
    ["iscp-go before 1.1.0 (the first 2^cwinbits bytes), cwinbits 15", 15, true],
    ["iscp-go before 1.1.0, cwinbits 10", 10, true],
    ["a client keeping the last bytes, found out as such", 15, false],
  ] as const)
    it(`context takeover, which context the peer keeps found out: ${name}`, async () => {
      const params: CompressionParams = { level: 6, contextTakeover: true, windowBits: winbits };
      const peer = goDeflatePeer(go.bin, { transport: "ws", takeover: true, winbits, keepFirst });
      try {
        // As compressed-transport.ts pairs them on the broker's side.
        const ours = new MessageDeflater(params, true);
        const theirs = new MessageInflater(params, 1 << 20, isMessage);
        for (const m of iscpMessages()) {
          expect(theirs.inflate(await peer.compress(m))).toEqual(Buffer.from(m));
          ours.peerContext = theirs.peerContext;
          expect(await peer.decompress(ours.deflate(m))).toEqual(Buffer.from(m));
        }
        expect(theirs.peerContext).toBe(keepFirst ? "first" : "last");
      } finally {
        peer.close();
      }
    });

  it("settles on the last bytes after 64 messages that decode both ways with different results", async () => {
    const params: CompressionParams = { level: 6, contextTakeover: true, windowBits: 9 };
    const peer = goDeflatePeer(go.bin, { transport: "ws", takeover: true, winbits: 9 });
    try {
      // Every decompression passes this check, so no message can tell the contexts apart.
      const theirs = new MessageInflater(params, 1 << 20, () => true);
      const msgs = [...iscpMessages(), ...iscpMessages(), ...iscpMessages()];
      let settledAt = -1;
      for (const [i, m] of msgs.entries()) {
        expect(theirs.inflate(await peer.compress(m))).toEqual(Buffer.from(m));
        if (settledAt < 0 && theirs.peerContext) settledAt = i;
      }
      expect(theirs.peerContext).toBe("last");
      expect(settledAt).toBeGreaterThanOrEqual(64);
    } finally {
      peer.close();
    }
  });

  it("never takes a raw DEFLATE stream for a zlib one, at any level", () => {
    for (let level = 1; level <= 9; level++)
      for (const m of [...messages(), Buffer.alloc(0), Buffer.alloc(70_000, 0x78)]) {
        expect(isZlibFramed(zlib.deflateRawSync(m, { level }))).toBe(false);
        expect(isZlibFramed(zlib.deflateSync(m, { level }))).toBe(true);
      }
  });

  it("context takeover makes later messages smaller than compressing each alone, as the peer expects", async () => {
    const params: CompressionParams = { level: 6, contextTakeover: true, windowBits: 15 };
    const alone = new MessageDeflater({ ...params, contextTakeover: false });
    const shared = new MessageDeflater(params);
    const ms = messages().slice(0, 40);
    const size = (d: MessageDeflater) => ms.reduce((n, m) => n + d.deflate(m).length, 0);
    expect(size(shared)).toBeLessThan(size(alone));
    // A peer without the context cannot read a later message: the context is really used.
    const later = new MessageDeflater(params);
    later.deflate(ms[0]!);
    const peer = goDeflatePeer(go.bin, { transport: "ws" });
    try {
      await expect(peer.decompress(later.deflate(ms[0]!))).rejects.toThrow(/go:/);
    } finally {
      peer.close();
    }
  });

  it("refuses a stream that decompresses to more than the message limit", () => {
    const d = new MessageDeflater({ level: 9, contextTakeover: false, windowBits: 15 });
    const bomb = d.deflate(Buffer.alloc(5 << 20));
    expect(() =>
      new MessageInflater({ level: 9, contextTakeover: false, windowBits: 15 }, 1 << 20).inflate(bomb),
    ).toThrow();
  });
});

describe("negotiation (comp, clevel, cwinbits)", () => {
  const read = (q: string, ws = true) => readCompression((k) => new URLSearchParams(q).get(k) ?? undefined, ws);
  it("level 0 or no level is off, as iscp-go sends it when compression is off", () => {
    expect(read("comp=context-takeover&clevel=0&cwinbits=0")).toEqual({});
    expect(read("comp=per-message")).toEqual({});
    expect(read("enc=proto")).toEqual({});
  });
  it("reads what iscp-go and iscp-rs send when compression is on", () => {
    expect(read("comp=context-takeover&clevel=6&cwinbits=12")).toEqual({
      params: { level: 6, contextTakeover: true, windowBits: 12 },
    });
    expect(read("comp=per-message&clevel=9")).toEqual({ params: { level: 9, contextTakeover: false, windowBits: 15 } });
    expect(read("comp=context-takeover&clevel=6&cwinbits=12", false)).toEqual({
      params: { level: 6, contextTakeover: false, windowBits: 12 },
    });
  });
  it("refuses values the clients never send, with a sentence", () => {
    expect(read("comp=gzip&clevel=6").error).toBe("comp must be per-message or context-takeover");
    expect(read("comp=per-message&clevel=10").error).toBe("clevel must be an integer from 0 to 9");
    expect(read("comp=per-message&clevel=-1").error).toBe("clevel must be an integer from 0 to 9");
    expect(read("comp=context-takeover&clevel=6&cwinbits=33").error).toBe("cwinbits must be an integer from 0 to 32");
  });
});
