// While the broker checks a ConnectRequest's token, it stops reading the connection: a client that floods
// messages meanwhile fills its own socket, not the broker's memory. What was read already waits in a
// bounded backlog; a client past the bound is disconnected with RATE_LIMIT_REACHED.
import { afterEach, expect, it } from "vitest";
import { encodeMessage, ResultCode, type Message } from "../../../proto/wire/message.js";
import type { AuthResult } from "../../../cloud/iscp/broker/options.js";
import { startTestBroker, waitFor, type TestBroker } from "../../support/iscp-broker.js";
import { connectReq, NODE_U, raw, type Raw } from "../../support/iscp-raw-peer.js";

let b: TestBroker | undefined;
afterEach(async () => {
  await b?.close();
  b = undefined;
});

/** A broker whose token check answers only when the test says so. */
async function slowAuthBroker(limits = {}) {
  let answer!: (r: AuthResult) => void;
  const checked = new Promise<AuthResult>((r) => (answer = r));
  b = await startTestBroker({ authenticate: () => checked, limits });
  return { broker: b, answer: () => answer({ ok: true, subject: { kind: "edge", uuid: "subject-1" } }) };
}

const call = (i: number, bytes: number): Message => ({
  upstreamCall: { callId: `c${i}`, destinationNodeId: NODE_U, name: "n", type: "t", payload: new Uint8Array(bytes) },
});

/** Sends the messages in one socket write (as one TCP read on the other side, where they fit). */
function sendTogether(r: Raw, msgs: Message[]): void {
  const socket = (r.ws as unknown as { _socket: import("node:net").Socket })._socket;
  socket.cork();
  for (const m of msgs) r.ws.send(encodeMessage(m, "proto"));
  socket.uncork();
}

/** Resolves once the client's unsent bytes stop changing (the broker has stopped reading, or read everything). */
async function settled(r: Raw): Promise<number> {
  let last = -1;
  let still = 0;
  for (const end = Date.now() + 30_000; Date.now() < end && still < 6; ) {
    await new Promise((res) => setTimeout(res, 100));
    still = r.ws.bufferedAmount === last ? still + 1 : 0;
    last = r.ws.bufferedAmount;
  }
  return last;
}

it("keeps a flood sent during the token check in the client's socket, then serves it all once connected", async () => {
  const { broker, answer } = await slowAuthBroker();
  const r = await raw(broker);
  r.send(connectReq());
  await waitFor(() => broker.broker.connections()[0]?.state === "authenticating", 30_000, "authenticating");
  const N = 256;
  const SIZE = 128 * 1024; // 32 MiB in all
  for (let i = 0; i < N; i++) r.send(call(i, SIZE));
  const unsent = await settled(r);
  const conn = broker.broker.connections()[0]!;
  // The broker holds at most what it had read when it paused; the rest is still the client's to send.
  expect(conn.connectBacklogBytes).toBeLessThan(4 * 1024 * 1024);
  expect(unsent).toBeGreaterThan(8 * 1024 * 1024);

  answer();
  expect((await r.next("connectResponse", 10_000)).connectResponse!.resultCode ?? 0).toBe(ResultCode.SUCCEEDED);
  // Every call of the flood is read and answered (no destination here: PROCESS_FAILED), none lost.
  await waitFor(() => r.msgs.filter((m) => m.message === "upstreamCallAck").length === N, 30_000, "every call acked");
  expect(r.msgs.filter((m) => m.message === "upstreamCallAck").map((m) => m.upstreamCallAck!.callId)).toEqual(
    Array.from({ length: N }, (_, i) => `c${i}`),
  );
  expect(conn.connectBacklogBytes).toBe(0);
  r.ws.close();
}, 120_000);

it("disconnects with RATE_LIMIT_REACHED a client whose messages before the ConnectResponse pass the bound", async () => {
  const { broker } = await slowAuthBroker({ maxConnectBacklogBytes: 4096 });
  const r = await raw(broker);
  sendTogether(r, [connectReq(), ...Array.from({ length: 8 }, (_, i) => call(i, 1024))]);
  const d = (await r.next("disconnect", 10_000)).disconnect!;
  expect(d.resultCode).toBe(ResultCode.RATE_LIMIT_REACHED);
  expect(d.resultString).toBe("more than 4096 bytes of messages before the ConnectResponse");
  await r.closed;
  expect(r.msgs.some((m) => m.message === "connectResponse")).toBe(false);
}, 120_000);
