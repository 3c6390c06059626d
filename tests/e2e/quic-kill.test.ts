// The cloud peer killed (kill -9) while the agent streams to it over QUIC (QoS unreliable, the default): nothing
// tells the agent, which notices at its next ping, ~10 s later; meanwhile the chunks it sent are given up as lost.
// They are sent again on the next connection, in real time, not left for the deferred upload at the measurement's
// end (minutes away, as long as the measurement lasts).
import type { ChildProcess } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { spawnPeerAt } from "../cloud/iscp/peer-process.js";
import { cloudIndices, range, writeNumbered } from "./points.js";
import { openFifoWriter, startStack, streamThroughRt, until, type Stack } from "./stack.js";

let s: Stack;
let cloud: { child: ChildProcess; exit: Promise<number | null> } | undefined;

/** The cloud peer as a child process on the stack's data and port (HTTP and QUIC), so that it can be killed. */
async function startCloudProcess(): Promise<void> {
  const listen = new URL(s.peer.url).host;
  const started = await spawnPeerAt(path.join(s.dir, "cloud"), {}, undefined, [
    "--listen",
    listen,
    "--iscp-quic-listen",
    listen,
  ]);
  cloud = started;
}

beforeAll(async () => {
  s = await startStack({ quic: true });
  await s.connect("quic");
  await streamThroughRt(s, { qos: "unreliable" });
  await s.stopCloud();
  await startCloudProcess();
}, 120_000);
afterAll(async () => {
  cloud?.child.kill("SIGKILL");
  await cloud?.exit;
  await s?.close();
});

const state = async () => (await s.agentApi.get<{ code: string; error: string }>("/upstreams/rt/state")).body;

it("sends the chunks in flight at a cloud kill -9 again on the next connection", async () => {
  await until(async () => ["quiet", "connected"].includes((await state()).code), 30_000, "upstream open over QUIC");
  const fh = await openFifoWriter(s.fifo("dc"));
  try {
    await writeNumbered(fh, 0, 100, { size: 64 });
    await until(async () => (await cloudIndices(s)).length === 100, 30_000, "100 points over QUIC");
    cloud!.child.kill("SIGKILL");
    await cloud!.exit;
    // Written while the cloud is gone: sent, never acknowledged, given up as lost after 2 s.
    for (let i = 100; i < 200; i += 10) {
      await writeNumbered(fh, i, i + 10, { size: 64 });
      await new Promise((r) => setTimeout(r, 100));
    }
    await startCloudProcess();
    await writeNumbered(fh, 200, 300, { size: 64 });
    // The measurement goes on (the FIFO stays open): what the cloud holds now came in real time.
    const got = await until(
      async () => {
        const i = await cloudIndices(s);
        return new Set(i).size >= 300 && i;
      },
      60_000,
      "300 points while the measurement goes on",
    );
    expect(got).toEqual(range(0, 300));
  } finally {
    await fh.close();
  }
}, 150_000);
