// What a client without credentials can hold: connections per address and in all, idle sockets, slow headers
// and bodies; a JSON body nested too deep; and what the readiness probe tells a stranger.
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPeer, type TestPeer } from "../harness.js";
import { adminCall, P } from "../measurements/helpers.js";

/** A raw TCP connection to the peer; `closed` resolves when the server ends it. */
function connect(peer: TestPeer, localAddress = "127.0.0.1") {
  const { port } = new URL(peer.url);
  const socket = net.connect({ port: Number(port), host: "127.0.0.1", localAddress });
  socket.on("error", () => {});
  let received = "";
  socket.on("data", (d) => (received += String(d)));
  const closed = new Promise<string>((resolve) => socket.once("close", () => resolve(received)));
  const open = new Promise<void>((resolve) => socket.once("connect", () => resolve()));
  return { socket, closed, open };
}

/** Whether the server answers an HTTP request on a new connection from `localAddress`. */
async function answers(peer: TestPeer, localAddress = "127.0.0.1"): Promise<boolean> {
  const c = connect(peer, localAddress);
  await c.open;
  c.socket.write("GET /api/health/alive HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  return /^HTTP\/1\.1 200/.test(await c.closed);
}

const within = <T>(p: Promise<T>, ms: number, what: string) =>
  Promise.race([
    p,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what} not within ${ms} ms`)), ms)),
  ]);

describe("HTTP limits without credentials", () => {
  let peer: TestPeer;
  beforeAll(async () => {
    peer = await startTestPeer({
      config: { maxConnectionsPerAddress: 4, maxConnections: 8, httpHeadersTimeout: 1, httpRequestTimeout: 2 },
    });
  });
  afterAll(async () => {
    await peer.stop();
  });

  it("caps the connections of one client address, not of another, and frees a slot when one closes", async () => {
    const held = Array.from({ length: 4 }, () => connect(peer));
    await Promise.all(held.map((c) => c.open));
    const fifth = connect(peer);
    expect(await within(fifth.closed, 30_000, "the fifth connection cut")).toBe("");
    expect(await answers(peer, "127.0.0.2")).toBe(true);
    held[0]!.socket.destroy();
    await held[0]!.closed;
    await expect.poll(() => answers(peer), { timeout: 30_000 }).toBe(true);
    for (const c of held) c.socket.destroy();
  });

  it("caps the connections of all addresses together", async () => {
    const held = ["127.0.0.3", "127.0.0.4", "127.0.0.5", "127.0.0.6"].flatMap((a) => [
      connect(peer, a),
      connect(peer, a),
    ]);
    await Promise.all(held.map((c) => c.open));
    const ninth = connect(peer, "127.0.0.7");
    expect(await within(ninth.closed, 30_000, "the ninth connection cut")).toBe("");
    for (const c of held) c.socket.destroy();
    await Promise.all(held.map((c) => c.closed));
    await expect.poll(() => answers(peer, "127.0.0.7"), { timeout: 30_000 }).toBe(true);
  });

  it("closes a connection that sends nothing, and one whose body trickles", async () => {
    const idle = connect(peer, "127.0.0.8");
    await idle.open;
    const slow = connect(peer, "127.0.0.9");
    await slow.open;
    // The token endpoint reads the body of anyone.
    slow.socket.write(
      "POST /api/auth/oauth2/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\ng",
    );
    const drip = setInterval(() => slow.socket.write("g"), 200);
    try {
      // Node's own default would hold both for minutes.
      await within(idle.closed, 30_000, "the idle connection closed");
      expect(await within(slow.closed, 30_000, "the trickling body cut")).toMatch(/^HTTP\/1\.1 408/);
    } finally {
      clearInterval(drip);
    }
  });

  it("answers 400 to a chunk upload nested 100,000 deep", async () => {
    const call = await adminCall(peer);
    const deep = `{"measUuid": "00000000-0000-0000-0000-000000000000", "sequenceUuid": "00000000-0000-0000-0000-000000000001", "chunks": ${"[".repeat(100_000)}${"]".repeat(100_000)}}`;
    const r = await call(`${P}/measurements/sequences/chunks`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: deep,
    });
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    expect(r.body.title).toMatch(/nested/);
    const obj = `${'{"a":'.repeat(100_000)}1${"}".repeat(100_000)}`;
    const r2 = await call(`${P}/measurements/sequences/chunks`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: obj,
    });
    expect(r2.status, JSON.stringify(r2.body)).toBe(400);
  });
});

describe("readiness answers to strangers", () => {
  let peer: TestPeer;
  beforeAll(async () => {
    // A reserve larger than any disk: storage reports full, with the figures an operator needs.
    peer = await startTestPeer({ config: {} });
    (peer.svc.storageRoom as unknown as { minFreeBytes: number }).minFreeBytes = Number.MAX_SAFE_INTEGER;
  });
  afterAll(async () => {
    await peer.stop();
  });

  it("tells a remote caller without credentials what is not ready, without free bytes; a super user or this host gets the details", async () => {
    // Through a proxy (a forwarding header): not this host.
    const remote = await peer.api("/health/ready", { headers: { "x-forwarded-for": "203.0.113.9" } });
    const body = (await remote.json()) as { title: string; properties: Record<string, string> };
    expect(remote.status).toBe(503);
    expect(body.properties.storage).toBe("storage is full");
    expect(body.title).not.toMatch(/\d{4,}/);
    const call = await adminCall(peer);
    const admin = await call("/health/ready", { headers: { "x-forwarded-for": "203.0.113.9" } });
    expect(admin.body.properties.storage).toMatch(/bytes free/);
    const local = (await (await peer.api("/health/ready")).json()) as { properties: Record<string, string> };
    expect(local.properties.storage).toMatch(/bytes free/);
  });
});
