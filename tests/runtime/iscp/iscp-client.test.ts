// Our client (runtime/iscp) against the broker over WebSocket.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { MessageTransport } from "../../../proto/transport/message-transport.js";
import { decodeMessage, QoS, ResultCode } from "../../../proto/wire/message.js";
import { IscpClient, type IscpClientOptions } from "../../../runtime/iscp/iscp-client.js";
import type { ReceivedChunk } from "../../../runtime/iscp/downstream.js";
import type { ClientUpstream } from "../../../runtime/iscp/upstream.js";
import { connectWebSocket } from "../../../proto/transport/ws/client.js";
import { startTestBroker, TOKEN, waitFor, type TestBroker } from "../../support/iscp-broker.js";

const NODE_U = "11111111-1111-4111-8111-111111111111";
const NODE_D = "22222222-2222-4222-8222-222222222222";
const enc = new TextEncoder();

/** Writes point `n` of data id a:t, flushes it, and waits for its ack. */
async function sendPoint(us: ClientUpstream, n: number): Promise<boolean> {
  us.write({ name: "a", type: "t" }, [{ elapsedTime: BigInt(n), payload: enc.encode(String(n)) }]);
  us.flush();
  return us.waitAcked();
}

/**
 * Transports whose loss the client can be told of while their sockets stay open: a link cut the broker has not
 * noticed. `cut(i)` tells the client that transport i is lost; `opened[i]` is that transport.
 */
function cuttable(open: () => Promise<MessageTransport>) {
  const opened: MessageTransport[] = [];
  const lost: ((reason: string) => void)[][] = [];
  const transport = async () => {
    const t = await open();
    const i = opened.push(t) - 1;
    lost[i] = [];
    return new Proxy(t, {
      get: (target, key) => {
        if (key === "onClose") return (cb: (reason: string) => void) => (target.onClose(cb), lost[i]!.push(cb));
        const v = Reflect.get(target, key) as unknown;
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
  };
  return { transport, opened, cut: (i: number) => lost[i]!.forEach((cb) => cb("link cut")) };
}

/** Records every frame the client receives (sizes, decoded kinds). */
function recording(open: () => Promise<MessageTransport>, frames: Uint8Array[]): () => Promise<MessageTransport> {
  return async () => {
    const t = await open();
    t.onMessage((f) => frames.push(f));
    return t;
  };
}

describe("runtime/iscp client over WebSocket", () => {
  let b: TestBroker;
  const clients: IscpClient[] = [];
  const client = async (o: Partial<IscpClientOptions> & { url?: string } = {}) => {
    const c = await IscpClient.connect({
      transport: () => connectWebSocket({ url: o.url ?? b.url }),
      token: TOKEN,
      ...o,
    });
    clients.push(c);
    return c;
  };
  beforeEach(async () => {
    b = await startTestBroker({ limits: { maxIncomingMessageBytes: 4 * 1024 * 1024 } });
  });
  afterEach(async () => {
    await Promise.allSettled(clients.splice(0).map((c) => c.close()));
    await b.close();
  });

  it("opens streams, relays points and base time, receives acks (enc=json too)", async () => {
    for (const encoding of ["proto", "json"] as const) {
      const d = await client({ nodeId: NODE_D, transport: () => connectWebSocket({ url: b.url, encoding }) });
      const ds = await d.openDownstream({
        filters: [{ sourceNodeId: NODE_U, dataFilters: [{ name: "#", type: "#" }] }],
      });
      const got: ReceivedChunk[] = [];
      const meta: Record<string, unknown>[] = [];
      ds.onChunk((c) => got.push(c));
      ds.onMetadata((m) => meta.push(m as Record<string, unknown>));
      const u = await client({ nodeId: NODE_U, transport: () => connectWebSocket({ url: b.url, encoding }) });
      const us = await u.openUpstream({ sessionId: `s-${encoding}`, qos: QoS.RELIABLE });
      const acks: number[] = [];
      us.onAck((rs) =>
        acks.push(...rs.filter((r) => r.resultCode === ResultCode.SUCCEEDED).map((r) => r.sequenceNumber)),
      );
      await u.sendBaseTime({
        sessionId: `s-${encoding}`,
        name: "manual",
        priority: 1000,
        elapsedTime: 0n,
        baseTime: 1_700_000_000_000_000_000n,
      });
      us.write({ name: "a", type: "t" }, [
        { elapsedTime: 1n, payload: enc.encode("x") },
        { elapsedTime: -2n, payload: enc.encode("y") },
      ]);
      expect(us.flush()).toBe(1);
      us.write({ name: "a", type: "t" }, [{ elapsedTime: 3, payload: enc.encode("z") }]);
      expect(us.flush()).toBe(2);
      expect(await us.waitAcked()).toBe(true);
      await waitFor(() => got.length === 2, 30_000, "chunks");
      expect(acks).toEqual([1, 2]);
      expect(
        got.map((c) => [
          c.sequenceNumber,
          c.upstream.streamId,
          c.groups.map((g) => [g.dataId.name, g.dataPoints.map((p) => p.elapsedTime)]),
        ]),
      ).toEqual([
        [1, us.streamId, [["a", [1n, -2n]]]],
        [2, us.streamId, [["a", [3n]]]],
      ]);
      const bt = meta.find((m) => m.baseTime) as
        | { baseTime: { baseTime: unknown }; sourceNodeId: string; requestId: number }
        | undefined;
      expect(bt?.sourceNodeId).toBe(NODE_U);
      expect(String(bt?.baseTime.baseTime)).toBe("1700000000000000000");
      // Server-originated request ids are odd.
      expect(meta.every((m) => (m.requestId as number) % 2 === 1)).toBe(true);
      await us.close();
      await d.close();
      await u.close();
    }
  });

  it("resumes after a dropped connection; a RELIABLE re-send is not relayed twice", async () => {
    const d = await client({ nodeId: NODE_D });
    const ds = await d.openDownstream({ filters: [{ sourceNodeId: NODE_U, dataFilters: [{ name: "#", type: "#" }] }] });
    const got: ReceivedChunk[] = [];
    ds.onChunk((c) => got.push(c));
    const u = await client({ nodeId: NODE_U, reconnectBaseMs: 20 });
    // A long ack interval keeps chunk 1 unacked when the socket goes away, so the client re-sends it.
    const us = await u.openUpstream({ sessionId: "s", qos: QoS.RELIABLE, ackIntervalMs: 1500 });
    us.write({ name: "a", type: "t" }, [{ elapsedTime: 1n, payload: enc.encode("1") }]);
    us.flush();
    await waitFor(() => got.length === 1, 30_000, "chunk 1");
    u.transport.terminate();
    us.write({ name: "a", type: "t" }, [{ elapsedTime: 2n, payload: enc.encode("2") }]);
    us.flush(); // written while disconnected: kept and sent after the resume
    await waitFor(() => u.reconnects === 1 && u.state === "open", 30_000, "reconnect");
    expect(await us.waitAcked(6000)).toBe(true);
    await waitFor(() => got.length === 2, 30_000, "chunk 2");
    await new Promise((r) => setTimeout(r, 200));
    expect(got.map((c) => c.sequenceNumber)).toEqual([1, 2]);
    expect(b.broker.stats().upstreams).toBe(1);

    // Dropping the downstream's socket from the server side: it resumes as well.
    for (const c of b.broker.connections().filter((c) => c.nodeId === NODE_D)) c.transport.terminate();
    await waitFor(() => d.reconnects === 1 && d.state === "open", 30_000, "downstream reconnect");
    us.write({ name: "a", type: "t" }, [{ elapsedTime: 3n, payload: enc.encode("3") }]);
    us.flush();
    await waitFor(() => got.length === 3, 30_000, "chunk 3");
    expect(got.map((c) => c.sequenceNumber)).toEqual([1, 2, 3]);
  }, 120_000);

  it("gives up a stream that expired while disconnected (STREAM_NOT_FOUND)", async () => {
    await b.close();
    b = await startTestBroker({ limits: { expiryGraceFloorSec: 0 } });
    const u = await client({ nodeId: NODE_U, reconnectBaseMs: 2400, reconnectMaxMs: 2400 });
    const us = await u.openUpstream({ sessionId: "s", expiryIntervalSec: 1 });
    const errors: Error[] = [];
    us.onError((e) => errors.push(e));
    u.transport.terminate();
    await waitFor(() => errors.length === 1, 30_000, "resume failure");
    expect(errors[0]!.message).toMatch(/STREAM_NOT_FOUND/);
    expect(b.broker.stats().upstreams).toBe(0);
  }, 120_000);

  it("waits for the next token when a reconnect's token is refused, and resumes; a second token refused ends it", async () => {
    await b.close();
    const accepted = new Set(["t1"]);
    const refusals: string[] = [];
    b = await startTestBroker({
      authenticate: async (token) => {
        if (accepted.has(token)) return { ok: true, subject: { kind: "edge", uuid: "subject-1" } };
        refusals.push(token);
        return { ok: false, resultCode: ResultCode.AUTH_FAILED, resultString: "token expired" };
      },
    });
    let held = "t1";
    const u = await client({ nodeId: NODE_U, reconnectBaseMs: 20, reconnectMaxMs: 200, token: () => held });
    const us = await u.openUpstream({ sessionId: "s", qos: QoS.RELIABLE });
    const errors: Error[] = [];
    us.onError((e) => errors.push(e));
    expect(await sendPoint(us, 1)).toBe(true);
    // The token held expires while the transport is down; its successor comes after the first refusal.
    accepted.delete("t1");
    u.transport.terminate();
    await waitFor(() => refusals.length === 1, 30_000, "the expired token refused");
    expect(u.state).not.toBe("closed");
    accepted.add("t2");
    held = "t2";
    await waitFor(() => u.reconnects === 1 && u.state === "open", 30_000, "reconnected with the new token");
    expect(await sendPoint(us, 2)).toBe(true);
    expect([refusals, errors, b.broker.stats().upstreams]).toEqual([["t1"], [], 1]); // the same stream, resumed

    // A refusal of the next token too is not about expiry: the client ends.
    accepted.delete("t2");
    u.transport.terminate();
    await waitFor(() => refusals.length === 2, 30_000, "t2 refused");
    held = "t3";
    await waitFor(() => u.state === "closed", 30_000, "closed after a second token refused");
    expect(refusals).toEqual(["t1", "t2", "t3"]);
  }, 120_000);

  it("resumes a stream the broker still counts as attached to the lost connection, once the broker lets it go", async () => {
    const link = cuttable(() => connectWebSocket({ url: b.url }));
    let conflicts = 0;
    const watched = async () => {
      const t = await link.transport();
      t.onMessage((f) => {
        const r = decodeMessage(f, t.encoding).upstreamResumeResponse;
        if (r?.resultCode === ResultCode.RESUME_REQUEST_CONFLICT) conflicts++;
      });
      return t;
    };
    const u = await client({ nodeId: NODE_U, reconnectBaseMs: 20, transport: watched });
    const us = await u.openUpstream({ sessionId: "s", qos: QoS.RELIABLE });
    const errors: Error[] = [];
    us.onError((e) => errors.push(e));
    expect(await sendPoint(us, 1)).toBe(true);
    link.cut(0); // the client sees its link die; the broker still holds the old connection open
    await waitFor(() => conflicts > 0, 30_000, "a resume refused: the stream is attached to the old connection");
    link.opened[0]!.terminate(); // the broker notices the old connection is gone
    await waitFor(() => u.reconnects === 1 && u.state === "open", 30_000, "resumed");
    expect(await sendPoint(us, 2)).toBe(true);
    expect([errors, b.broker.stats().upstreams]).toEqual([[], 1]);
  }, 120_000);

  it("splits relayed chunks so that no frame to a client exceeds 1 MiB", async () => {
    const frames: Uint8Array[] = [];
    const d = await client({ nodeId: NODE_D, transport: recording(() => connectWebSocket({ url: b.url }), frames) });
    const ds = await d.openDownstream({ filters: [{ sourceNodeId: NODE_U, dataFilters: [{ name: "#", type: "#" }] }] });
    let points = 0;
    ds.onChunk((c) => (points += c.groups.reduce((n, g) => n + g.dataPoints.length, 0)));
    const u = await client({ nodeId: NODE_U });
    const us = await u.openUpstream({ sessionId: "s" });
    const payload = new Uint8Array(1000).fill(1);
    us.write(
      { name: "big", type: "bytes" },
      Array.from({ length: 1500 }, (_, i) => ({ elapsedTime: i, payload })),
    );
    us.flush();
    await waitFor(() => points === 1500, 30_000, "all points");
    const chunkFrames = frames.filter((f) => decodeMessage(f, "proto").downstreamChunk);
    expect(chunkFrames.length).toBeGreaterThan(1);
    expect(Math.max(...frames.map((f) => f.length))).toBeLessThanOrEqual(1024 * 1024);
  });

  it("flushes on its own by interval and by buffered size", async () => {
    const u = await client({ nodeId: NODE_U });
    const timed = await u.openUpstream({ sessionId: "s", flushIntervalMs: 20 });
    timed.write({ name: "a", type: "t" }, [{ elapsedTime: 0, payload: enc.encode("x") }]);
    await waitFor(() => timed.lastSequenceNumber === 1, 30_000, "interval flush");
    const sized = await u.openUpstream({ sessionId: "s", flushBytes: 100 });
    sized.write({ name: "a", type: "t" }, [{ elapsedTime: 0, payload: new Uint8Array(60) }]);
    expect(sized.lastSequenceNumber).toBe(0);
    sized.write({ name: "a", type: "t" }, [{ elapsedTime: 1, payload: new Uint8Array(60) }]);
    expect(sized.lastSequenceNumber).toBe(1);
    expect(await sized.waitAcked()).toBe(true);
    await Promise.all([timed.close(), sized.close()]);
    expect(b.broker.stats().upstreams).toBe(0);
  });

  it("round-trips an E2E call", async () => {
    const a = await client({ nodeId: NODE_U });
    const z = await client({ nodeId: NODE_D });
    z.onCall(
      (c) =>
        void z.call({
          destinationNodeId: c.sourceNodeId,
          requestCallId: c.callId,
          name: "re",
          type: "t",
          payload: c.payload,
        }),
    );
    const replies: { requestCallId: string; payload: string }[] = [];
    a.onCall((c) => replies.push({ requestCallId: c.requestCallId, payload: new TextDecoder().decode(c.payload) }));
    const callId = await a.call({ destinationNodeId: NODE_D, name: "q", type: "t", payload: enc.encode("hello") });
    await waitFor(() => replies.length === 1, 30_000, "reply");
    expect(replies[0]).toEqual({ requestCallId: callId, payload: "hello" });
    await expect(
      a.call({ destinationNodeId: "nobody", name: "q", type: "t", payload: new Uint8Array(0) }),
    ).rejects.toMatchObject({ resultCode: ResultCode.PROCESS_FAILED });
  });
});
