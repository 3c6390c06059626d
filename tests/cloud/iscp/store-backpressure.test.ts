// Storage slower than the network: the broker stops reading a connection whose persisted chunks wait
// for their storage commit beyond its share of `maxPendingStoreBytes` and whose held messages pass
// `maxHeldBytesPerConn`, so its memory stays bounded; once storage
// catches up every chunk is stored and acked. Over WebSocket the socket is paused (TCP's window holds the
// client back); over QUIC the stream is no longer read (quiche's flow-control window holds it back).
import { afterEach, expect, it } from "vitest";
import { startIscpQuic } from "../../../cloud/iscp/broker/broker.js";
import type { UpstreamChunkData } from "../../../cloud/iscp/broker/options.js";
import { QoS } from "../../../proto/wire/message.js";
import { IscpClient } from "../../../runtime/iscp/iscp-client.js";
import { connectQuic } from "../../../proto/transport/quic/client.js";
import { connectWebSocket } from "../../../proto/transport/ws/client.js";
import { makeLocalhostCert, startTestBroker, TOKEN, waitFor, type TestBroker } from "../../support/iscp-broker.js";

const NODE = "11111111-1111-4111-8111-111111111111";
let b: TestBroker | undefined;
let c: IscpClient | undefined;
afterEach(async () => {
  await c?.close();
  await b?.close();
});

it.each(["websocket", "quic"])(
  "pauses a %s connection while too many persisted chunks wait for storage, and stores all of them",
  async (kind) => {
    const LIMIT = 8;
    const CHUNKS = 120;
    let pending = 0;
    let maxPending = 0;
    let open = false;
    const waiting: (() => void)[] = [];
    const stored = new Set<number>();
    b = await startTestBroker({
      // About LIMIT chunks of 16 KiB (each costs its bytes plus pendingStoreChunkBytes).
      limits: { maxPendingStoreBytes: LIMIT * 17 * 1024 },
      onUpstreamChunk: async (_info, chunk: UpstreamChunkData) => {
        pending++;
        maxPending = Math.max(maxPending, pending);
        if (!open) await new Promise<void>((r) => waiting.push(r));
        pending--;
        stored.add(chunk.sequenceNumber);
      },
    });
    let transport = () => connectWebSocket({ url: b!.url });
    if (kind === "quic") {
      const { key, cert } = makeLocalhostCert();
      const quic = await startIscpQuic({ ...b.broker.options, broker: b.broker, key, cert });
      transport = () => connectQuic({ host: "127.0.0.1", port: quic.port, ca: cert, serverName: "localhost" });
    }
    c = await IscpClient.connect({ transport, token: TOKEN, nodeId: NODE });
    const us = await c.openUpstream({ sessionId: "s", qos: QoS.RELIABLE, persist: true });
    const payload = new Uint8Array(16 * 1024); // a few chunks per socket read
    for (let i = 0; i < CHUNKS; i++) {
      us.write({ name: "n", type: "t" }, [{ elapsedTime: BigInt(i), payload }]);
      us.flush();
    }
    await waitFor(() => pending >= LIMIT, 30_000, "storage to fill up");
    await new Promise((r) => setTimeout(r, 300)); // the broker would go on reading here without the pause
    // Frames already parsed from the last read still arrive; the rest waits in the socket or quiche's stream.
    expect(maxPending).toBeLessThan(LIMIT + 8);
    expect(stored.size).toBe(0);

    open = true;
    for (const w of waiting.splice(0)) w();
    expect(await us.waitAcked(10_000)).toBe(true);
    expect(stored.size).toBe(CHUNKS);
  },
  30_000,
);
