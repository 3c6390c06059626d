// Large WebSocket messages received into reused buffers: only through ws 8's Receiver internals, and a server
// whose ws no longer has them says so once (the broker logs it) instead of silently losing the reuse.
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import WebSocket, { WebSocketServer } from "ws";
import { poolReceivedMessages, receivedMessagePooling } from "../../../../proto/transport/ws/pooled-receive.js";

describe("received-message pooling", () => {
  let wss: WebSocketServer | undefined;
  let client: WebSocket | undefined;
  afterEach(async () => {
    client?.terminate();
    await new Promise<void>((r) => (wss ? wss.close(() => r()) : r()));
  });

  const serverSide = async (): Promise<WebSocket> => {
    wss = new WebSocketServer({ port: 0, host: "127.0.0.1" });
    await new Promise<void>((r) => wss!.once("listening", () => r()));
    const accepted = new Promise<WebSocket>((r) => wss!.once("connection", r));
    client = new WebSocket(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}`);
    await new Promise<void>((r) => client!.once("open", () => r()));
    return accepted;
  };
  /** A connection whose Receiver lacks ws 8's `_buffers` / `_bufferedBytes` (as after a ws upgrade moved them). */
  const moved = () => ({ _receiver: { consume: () => Buffer.alloc(0) } }) as unknown as WebSocket;

  it("pools on the installed ws, and a pooled connection still receives large messages whole", async () => {
    const ws = await serverSide();
    expect(poolReceivedMessages(ws)).toBe(true);
    const big = Buffer.alloc(1 << 20).map((_, i) => i % 253);
    const got = new Promise<Buffer>((r) => ws.once("message", (d) => r(d as Buffer)));
    client!.send(big);
    expect((await got).equals(big)).toBe(true);
  });

  it("reports missing internals once per server, and never for connections that have them", async () => {
    const ws = await serverSide();
    let reports = 0;
    const pool = receivedMessagePooling(() => reports++);
    pool(ws);
    expect(reports).toBe(0);
    expect(poolReceivedMessages(moved())).toBe(false);
    pool(moved());
    pool(moved());
    expect(reports).toBe(1);
  });
});
