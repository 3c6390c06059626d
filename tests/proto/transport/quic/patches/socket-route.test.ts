// routeShortHeaders on a stand-in for @matrixai/quic's QUICSocket: which packets skip the library's routing.
import type dgram from "node:dgram";
import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { routeShortHeaders } from "../../../../../proto/transport/quic/patches/socket-route.js";

const CID = Buffer.alloc(20, 0xab);
const from = { address: "127.0.0.1", port: 4433, family: "IPv4", size: 0 } as dgram.RemoteInfo;

function fakeSocket() {
  const udp = new EventEmitter();
  const received: { data: Uint8Array; from: unknown }[] = [];
  const viaLibrary: Buffer[] = [];
  const connection = { recv: async (data: Uint8Array, f: unknown) => void received.push({ data, from: f }) };
  const socket = {
    socket: udp,
    connectionMap: { get: (id: string) => (id === CID.toString("hex") ? connection : undefined) },
    handleSocketMessage: async (data: Buffer) => void viaLibrary.push(data),
  };
  udp.on("message", socket.handleSocketMessage);
  return { owner: { socket }, udp, socket, received, viaLibrary };
}

const packet = (flags: number, cid: Buffer, body = 32) =>
  Buffer.concat([Buffer.from([flags]), cid, Buffer.alloc(body)]);

describe("routeShortHeaders", () => {
  it("hands a short-header packet for a known connection id straight to that connection", async () => {
    const f = fakeSocket();
    expect(routeShortHeaders(f.owner)).toBe(true);
    const p = packet(0x40, CID);
    f.udp.emit("message", p, from);
    await Promise.resolve();
    expect(f.received).toEqual([{ data: p, from: { host: "127.0.0.1", port: 4433 } }]);
    expect(f.viaLibrary).toEqual([]);
  });

  it("leaves long headers, unknown ids and runt packets to the library", async () => {
    const f = fakeSocket();
    routeShortHeaders(f.owner);
    const others = [packet(0xc0, CID), packet(0x40, Buffer.alloc(20, 1)), Buffer.from([0x40, 0xab, 0xab])];
    for (const p of others) f.udp.emit("message", p, from);
    await Promise.resolve();
    expect(f.viaLibrary).toEqual(others);
    expect(f.received).toEqual([]);
  });

  it("replaces the library's listener once per socket, where the library's stop will find it", () => {
    const f = fakeSocket();
    routeShortHeaders(f.owner);
    routeShortHeaders(f.owner);
    expect(f.udp.listeners("message")).toEqual([f.socket.handleSocketMessage]);
    f.udp.off("message", f.socket.handleSocketMessage);
    expect(f.udp.listenerCount("message")).toBe(0);
  });

  it("changes nothing when the library's internals are not there or the socket is not listening", () => {
    expect(routeShortHeaders({})).toBe(false);
    expect(routeShortHeaders({ socket: { socket: new EventEmitter() } })).toBe(false);
    const f = fakeSocket();
    f.udp.removeAllListeners("message");
    expect(routeShortHeaders(f.owner)).toBe(false);
    expect(f.udp.listenerCount("message")).toBe(0);
  });
});
