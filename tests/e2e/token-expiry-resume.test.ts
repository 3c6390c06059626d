// Access tokens that live 4 s: the agent refreshes them, and after a network cut long after its first
// token expired, its iSCP client reconnects with the token held now and resumes the same stream (one
// sequence in the cloud, every point once) instead of being refused and starting over. The cut comes as a
// token refresh is under way, so that refresh fails too: the token held stays in use until its successor
// comes (it may expire meanwhile).
import { afterAll, beforeAll, expect, it } from "vitest";
import { cloudIndices, range, writeNumbered } from "./points.js";
import { openFifoWriter, until, type Stack } from "./stack.js";
import { startStackBehindRelay, type TcpRelay } from "./tcp-cut.js";

let s: Stack;
let relay: TcpRelay;
beforeAll(async () => void ({ s, relay } = await startStackBehindRelay({ cloud: { accessTokenTtl: 4 } })), 120_000);
afterAll(async () => {
  await s?.close();
  await relay?.close();
});

const upstream = async () => (await s.agentApi.get<{ code: string }>("/upstreams/rt/state")).body;

it("resumes with a refreshed token after the first one expired", async () => {
  await until(async () => ["quiet", "connected"].includes((await upstream()).code), 30_000, "upstream open");
  const fh = await openFifoWriter(s.fifo("dc"));
  try {
    await writeNumbered(fh, 0, 100);
    await until(async () => (await cloudIndices(s)).length === 100, 30_000, "100 points in real time");
    await new Promise((r) => setTimeout(r, 6000)); // the token the stream opened with has expired
    const before = relay.accepted;
    await relay.cutAtRequest("POST /api/auth/oauth2/token");
    await until(
      async () => relay.accepted > before && ["quiet", "connected"].includes((await upstream()).code),
      30_000,
      "reconnected",
    );
    await writeNumbered(fh, 100, 200);
  } finally {
    await fh.close();
  }
  await s.agentApi.patch("/device-connectors/upstream/dc", { enabled: false });
  const got = await until(
    async () => {
      const i = await cloudIndices(s);
      return i.length >= 200 && i;
    },
    60_000,
    "200 points",
  );
  expect(got).toEqual(range(0, 200));
  const [m] = await s.measurements();
  const r = await fetch(`${s.peer.url}/api/v1/projects/${s.cloud.projectUuid}/measurements/${m!.uuid}/sequences`, {
    headers: { "X-Intdash-Token": s.cloud.token },
  });
  expect(((await r.json()) as { items: unknown[] }).items).toHaveLength(1); // resumed, not a new stream
}, 120_000);
