// Every WebSocket upgrade the cloud peer does not take is answered and its socket freed: before, an
// upgrade to any other path got no answer and its socket stayed open in the server for good (CLOSE_WAIT),
// so unauthenticated clients could exhaust the server's descriptors. Counted in the server process.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { decodeMessage, encodeMessage, ResultCode } from "../../../proto/wire/message.js";
import {
  fdsSettle,
  parseResponse,
  rawUpgrade,
  spawnPeerProcess,
  type PeerProcess,
  type UpgradeOutcome,
} from "./peer-process.js";

let peer: PeerProcess;
let baseline: number;

beforeAll(async () => {
  peer = await spawnPeerProcess();
  // One request of each kind first, so lazily opened files (database pages, payload files) are counted.
  await (await fetch(`${peer.url}/api/nope`)).text();
  const warm = await rawUpgrade(peer.port, "/nope", { waitMs: 1000 });
  warm.socket.destroy();
  await new Promise((r) => setTimeout(r, 200));
  baseline = peer.fds();
}, 120_000); // the child compiles the cloud through tsx: slow on a busy machine
afterAll(async () => {
  await peer?.stop();
});

async function many(n: number, run: (i: number) => Promise<UpgradeOutcome>): Promise<UpgradeOutcome[]> {
  const outs = await Promise.all(Array.from({ length: n }, (_, i) => run(i)));
  return outs;
}

describe("WebSocket upgrades the broker does not take", () => {
  it("an upgrade to another path gets the REST API's 404 JSON error and the server closes the connection", async () => {
    const rest = (await (await fetch(`${peer.url}/api/nope`)).json()) as { type: string };
    const out = await rawUpgrade(peer.port, "/nope");
    out.socket.destroy();
    const r = parseResponse(out.response);
    expect(r.status).toBe(404);
    expect(r.headers).toContain("content-type: application/json");
    expect(r.body).toEqual({ type: rest.type, title: "no WebSocket API at GET /nope" });
    expect(rest.type).toBe("not_found");
    expect(out.closedByServer).toBe(true);
  });

  it("500 such upgrades leave the server's open descriptors where they were", async () => {
    // Half the clients close their side after the request (as a probe does), half keep it open: the server must free both.
    const outs = await many(500, (i) =>
      rawUpgrade(peer.port, `/nope/${i}`, { halfClose: i % 2 === 0, waitMs: 15_000 }),
    );
    const after = await fdsSettle(peer, baseline + 5, 10_000);
    for (const o of outs) o.socket.destroy();
    expect(outs.filter((o) => parseResponse(o.response).status === 404)).toHaveLength(500);
    expect(outs.filter((o) => !o.closedByServer)).toHaveLength(0);
    expect(after).toBeLessThanOrEqual(baseline + 5);
  }, 120_000);
});

describe("refused upgrades to the broker's path", () => {
  it("a bad query or method is answered 400/405 in the API's error shape and the socket freed", async () => {
    const bad = await many(100, (i) =>
      i % 3 === 0
        ? rawUpgrade(peer.port, "/api/iscp/connect?enc=xml")
        : i % 3 === 1
          ? rawUpgrade(peer.port, "/api/iscp/connect?comp=deflate")
          : rawUpgrade(peer.port, "/api/iscp/connect", { method: "POST" }),
    );
    const after = await fdsSettle(peer, baseline + 5);
    for (const o of bad) o.socket.destroy();
    expect(bad.filter((o) => !o.closedByServer)).toHaveLength(0);
    expect(parseResponse(bad[0]!.response)).toMatchObject({
      status: 400,
      body: { type: "invalid_request", title: "enc must be proto or json" },
    });
    expect(parseResponse(bad[1]!.response)).toMatchObject({
      status: 400,
      body: { type: "invalid_request", title: "comp must be per-message or context-takeover" },
    });
    expect(parseResponse(bad[2]!.response)).toMatchObject({ status: 405, body: { type: "method_not_allowed" } });
    expect(after).toBeLessThanOrEqual(baseline + 5);
  }, 120_000);

  it("a connection whose ConnectRequest fails authentication is refused and freed", async () => {
    const refusals = await Promise.all(
      Array.from({ length: 50 }, async () => {
        const ws = new WebSocket(`ws://127.0.0.1:${peer.port}/api/iscp/connect?enc=proto`);
        ws.on("error", () => {});
        await new Promise((r) => ws.once("open", r));
        const closed = new Promise<void>((r) => ws.once("close", () => r()));
        const first = new Promise<Buffer>((r) => ws.once("message", (d) => r(d as Buffer)));
        ws.send(
          encodeMessage(
            {
              connectRequest: {
                requestId: 0,
                protocolVersion: "2.0.0",
                nodeId: "",
                pingInterval: 10,
                pingTimeout: 1,
                extensionFields: { accessToken: "not-a-token" },
              },
            },
            "proto",
          ),
        );
        const code = decodeMessage(await first, "proto").connectResponse?.resultCode;
        await closed;
        return code;
      }),
    );
    expect(new Set(refusals)).toEqual(new Set([ResultCode.AUTH_FAILED]));
    expect(await fdsSettle(peer, baseline + 5)).toBeLessThanOrEqual(baseline + 5);
  }, 120_000);
});
