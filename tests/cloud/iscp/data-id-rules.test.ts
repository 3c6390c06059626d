// The broker applies the same data-ID rules as the REST upload and the agent: an upstream open
// declaring a bad data ID is refused, a chunk group carrying one is refused (INVALID_DATA_ID) and
// gets no alias, and nothing of it reaches the storage hook.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ResultCode } from "../../../proto/wire/message.js";
import type { UpstreamChunkData } from "../../../cloud/iscp/broker/options.js";
import { startTestBroker, waitFor, type TestBroker } from "../../support/iscp-broker.js";
import { connected } from "../../support/iscp-raw-peer.js";

let b: TestBroker;
const stored: UpstreamChunkData[] = [];
beforeAll(async () => {
  b = await startTestBroker({ onUpstreamChunk: (_info, chunk) => void stored.push(chunk) });
});
afterAll(async () => {
  await b.close();
});

const point = { elapsedTime: 1, payload: new Uint8Array([1]) };

describe("broker: data-ID rules", () => {
  it("an upstream open declaring a data ID that breaks the rules is refused with INVALID_DATA_ID naming it", async () => {
    const r = await connected(b);
    r.send({
      upstreamOpenRequest: {
        requestId: 2,
        sessionId: "s",
        dataIds: [
          { name: "ok/a", type: "float64" },
          { name: "/../#+\0", type: "float64" },
        ],
      },
    });
    const resp = (await r.next("upstreamOpenResponse")).upstreamOpenResponse!;
    expect(resp.resultCode).toBe(ResultCode.INVALID_DATA_ID);
    expect(resp.resultString).toBe("data_ids[1]: data name must not start or end with `/`");
    r.send({ upstreamOpenRequest: { requestId: 4, sessionId: "s", dataIds: [{ name: "ok/a", type: "" }] } });
    expect((await r.next("upstreamOpenResponse")).upstreamOpenResponse!.resultCode).toBe(ResultCode.INVALID_DATA_ID);
    r.ws.close();
  });

  it("a chunk whose group breaks the rules is refused and not stored; a good chunk is stored", async () => {
    const r = await connected(b);
    r.send({ upstreamOpenRequest: { requestId: 2, sessionId: "s", ackInterval: 0 } });
    const alias = (await r.next("upstreamOpenResponse")).upstreamOpenResponse!.assignedStreamIdAlias!;
    const bad = { name: "a/\u0001b", type: "float64" };
    r.send({
      upstreamChunk: {
        streamIdAlias: alias,
        dataIds: [bad],
        streamChunk: { sequenceNumber: 1, dataPointGroups: [{ dataId: bad, dataPoints: [point] }] },
      },
    });
    r.send({
      upstreamChunk: {
        streamIdAlias: alias,
        streamChunk: {
          sequenceNumber: 2,
          dataPointGroups: [{ dataId: { name: "a", type: "two words" }, dataPoints: [point] }],
        },
      },
    });
    const good = { name: "v1/10/a", type: "float64" };
    r.send({
      upstreamChunk: {
        streamIdAlias: alias,
        dataIds: [good],
        streamChunk: { sequenceNumber: 3, dataPointGroups: [{ dataId: good, dataPoints: [point] }] },
      },
    });
    const results = new Map<number, { code: number; str: string }>();
    const aliases: string[] = [];
    await waitFor(
      () => {
        for (const m of r.msgs.splice(0)) {
          const ack = m.upstreamChunkAck;
          if (!ack) continue;
          for (const x of ack.results ?? [])
            results.set(x.sequenceNumber ?? 0, { code: x.resultCode ?? 0, str: x.resultString ?? "" });
          for (const d of Object.values(ack.dataIdAliases ?? {})) aliases.push(`${d.type}:${d.name}`);
        }
        return results.size >= 3;
      },
      30_000,
      "three chunk results",
    );
    expect(results.get(1)).toEqual({
      code: ResultCode.INVALID_DATA_ID,
      str: "data name must not contain control characters",
    });
    expect(results.get(2)).toEqual({
      code: ResultCode.INVALID_DATA_ID,
      str: "data type must be printable ASCII without spaces",
    });
    expect(results.get(3)).toEqual({ code: ResultCode.SUCCEEDED, str: "OK" });
    expect(aliases).toEqual(["float64:v1/10/a"]);
    expect(
      stored.map((c) => [c.sequenceNumber, c.dataPointGroups.map((g) => `${g.dataId.type}:${g.dataId.name}`)]),
    ).toEqual([[3, ["float64:v1/10/a"]]]);
    r.ws.close();
  });
});
