// The ingest journal belongs to the peer that serves its data directory: a maintenance command run beside it
// (`cloud-peer token create`) leaves the journal alone, so the peer goes on taking and storing chunks; a second
// peer started on the same directory commits directly instead of applying and removing the segments the first
// still appends to.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { UpstreamChunkIn } from "../../../cloud/measurements/ingest/upstream-store.js";
import { runCloudPeer } from "../database/cloud-peer-cli.js";
import { startTestPeer, type TestPeer } from "../harness.js";
import { adminCall, brokerChunkHook, persistedUpstream, sequencesOf, type Call } from "./helpers.js";

const chunk = (n: number): UpstreamChunkIn => ({
  sequenceNumber: n,
  dataPointGroups: [
    {
      dataId: { name: "o/v", type: "string" },
      dataPoints: [{ elapsedTime: BigInt(n), payload: Buffer.from(`o${n}`) }],
    },
  ],
});

describe("the ingest journal's owner", () => {
  let peer: TestPeer;
  let call: Call;
  beforeAll(async () => {
    peer = await startTestPeer();
    call = await adminCall(peer);
  });
  afterAll(async () => peer?.stop());

  it("keeps storing acknowledged chunks after a maintenance command ran on its data directory", async () => {
    const up = persistedUpstream();
    const hook = brokerChunkHook(peer, up);
    await hook(chunk(1));
    await Promise.all([2, 3, 4].map((n) => hook(chunk(n))));
    const made = await runCloudPeer(["token", "create", "--user", "admin", "--name", "beside", "--data", peer.dataDir]);
    expect(made.code, made.stderr).toBe(0);
    const answers = await Promise.all(Array.from({ length: 60 }, (_, i) => hook(chunk(i + 5))));
    expect(answers.every((a) => a === undefined)).toBe(true);
    expect(await sequencesOf(call, up.sessionId)).toMatchObject([{ received_chunks_count: 64 }]);
  });

  it("lets a second peer on the same data directory commit directly, leaving the journal to the first", async () => {
    const second = await startTestPeer({ dataDir: peer.dataDir });
    try {
      const up = persistedUpstream();
      const hook = brokerChunkHook(second, up);
      await hook(chunk(1));
      await Promise.all([2, 3].map((n) => hook(chunk(n))));
      // Committed before their acks: in cloud.db, so the first peer shows them too.
      expect(await sequencesOf(call, up.sessionId)).toMatchObject([{ received_chunks_count: 3 }]);
    } finally {
      await second.stop();
    }
    // The first one goes on with its journal.
    const up = persistedUpstream();
    const hook = brokerChunkHook(peer, up);
    await hook(chunk(1));
    await Promise.all([2, 3].map((n) => hook(chunk(n))));
    expect(await sequencesOf(call, up.sessionId)).toMatchObject([{ received_chunks_count: 3 }]);
  });
});
