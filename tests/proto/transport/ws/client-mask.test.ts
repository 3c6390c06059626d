// The agent's WebSocket frames carry the MASK bit with a zero key (so ws sends the payload without copying
// it to mask it), and a standard server reads them unchanged.
import { createHash } from "node:crypto";
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocketServer } from "ws";
import { connectWebSocket } from "../../../../proto/transport/ws/client.js";

const servers: http.Server[] = [];
const upgraded: Socket[] = [];
afterEach(async () => {
  // Upgraded sockets are no longer the HTTP server's to close.
  for (const s of upgraded.splice(0)) s.destroy();
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

function listen(s: http.Server): Promise<number> {
  servers.push(s);
  return new Promise((r) => s.listen(0, "127.0.0.1", () => r((s.address() as AddressInfo).port)));
}

describe("agent WebSocket client frames", () => {
  it("sets the MASK bit with a zero masking key, payload bytes as sent", async () => {
    const server = http.createServer();
    const firstFrame = new Promise<Buffer>((resolve) => {
      server.on("upgrade", (req, socket: Socket) => {
        upgraded.push(socket);
        const accept = createHash("sha1")
          .update(`${req.headers["sec-websocket-key"]}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`)
          .digest("base64");
        socket.write(
          `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`,
        );
        let got = Buffer.alloc(0);
        socket.on("data", (d: Buffer) => {
          got = Buffer.concat([got, d]);
          if (got.length >= 2 + 4 + 3) resolve(got);
        });
      });
    });
    const port = await listen(server);
    const t = await connectWebSocket({ url: `ws://127.0.0.1:${port}/api/iscp/connect` });
    t.send(new Uint8Array([1, 2, 3]));
    const f = await firstFrame;
    t.terminate();
    expect(f[0]).toBe(0x82); // FIN, binary
    expect(f[1]).toBe(0x80 | 3); // MASK bit, length 3
    expect([...f.subarray(2, 6)]).toEqual([0, 0, 0, 0]);
    expect([...f.subarray(6, 9)]).toEqual([1, 2, 3]);
  });

  it("is read unchanged by a standard WebSocket server", async () => {
    const server = http.createServer();
    const wss = new WebSocketServer({ server });
    const received = new Promise<Buffer>((resolve) =>
      wss.on("connection", (ws) => ws.on("message", (m: Buffer) => resolve(m))),
    );
    const port = await listen(server);
    const t = await connectWebSocket({ url: `ws://127.0.0.1:${port}/` });
    const payload = Uint8Array.from({ length: 70_000 }, (_, i) => i & 0xff);
    t.send(payload);
    expect(Buffer.from(await received).equals(Buffer.from(payload))).toBe(true);
    t.terminate();
    wss.close();
  });
});
