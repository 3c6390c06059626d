// The per-connection stream limits hold when a client pipelines open requests without waiting for
// answers: an open that checked the count, awaited the open hook and only then added its stream would let every
// open arriving meanwhile pass the same check (256 allowed, over 1,000 opened).
import { afterEach, describe, expect, it } from "vitest";
import { ResultCode, type iscp2 } from "../../../proto/wire/message.js";
import { startTestBroker, waitFor, type TestBroker } from "../../support/iscp-broker.js";
import { ALL, connected, NODE_U, type Raw } from "../../support/iscp-raw-peer.js";

let b: TestBroker | undefined;
afterEach(async () => {
  await b?.close();
  b = undefined;
});

const pause = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Sends `n` upstream opens back to back and collects one response per request. */
async function pipelineUpstreamOpens(r: Raw, n: number, firstId = 2): Promise<iscp2.IUpstreamOpenResponse[]> {
  for (let i = 0; i < n; i++) r.send({ upstreamOpenRequest: { requestId: firstId + 2 * i, sessionId: "s" } });
  const got = () => r.msgs.filter((m) => m.message === "upstreamOpenResponse");
  await waitFor(() => got().length >= n, 30_000, `${n} upstream open responses`);
  const out = got().map((m) => m.upstreamOpenResponse!);
  r.msgs.length = 0;
  return out;
}

const count = (rs: { resultCode?: iscp2.ResultCode | null }[], code: iscp2.ResultCode) =>
  rs.filter((x) => (x.resultCode ?? 0) === code).length;

describe("per-connection stream limits under pipelined opens", () => {
  it("5,000 pipelined upstream opens behind a slow open hook open at most maxUpstreamsPerConn streams; the rest are TOO_MANY_STREAMS", async () => {
    b = await startTestBroker({ onUpstreamOpen: () => pause(20) });
    const r = await connected(b);
    const rs = await pipelineUpstreamOpens(r, 5000);
    expect(rs).toHaveLength(5000);
    expect(count(rs, ResultCode.SUCCEEDED)).toBe(256);
    expect(count(rs, ResultCode.TOO_MANY_STREAMS)).toBe(5000 - 256);
    expect(b.broker.connections()[0]!.upstreams.size).toBe(256);
    r.ws.close();
  }, 120_000);

  it("an open the hook refuses gives its slot back", async () => {
    // The hook holds its refusals until every other open of the batch has been answered: a timed pause let a
    // refusal free its slot before the last opens of the batch arrived on a busy machine (8 refused, not 4).
    let refuse = true;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    b = await startTestBroker({
      limits: { maxUpstreamsPerConn: 4 },
      onUpstreamOpen: async () => {
        if (!refuse) return undefined;
        await gate;
        return { resultCode: ResultCode.SESSION_NOT_FOUND, resultString: "no session" };
      },
    });
    const r = await connected(b);
    const answered = () =>
      r.msgs.filter((m) => m.message === "upstreamOpenResponse").map((m) => m.upstreamOpenResponse!);
    for (let i = 0; i < 20; i++) r.send({ upstreamOpenRequest: { requestId: 2 + 2 * i, sessionId: "s" } });
    await waitFor(() => count(answered(), ResultCode.TOO_MANY_STREAMS) >= 16, 30_000, "16 opens refused for the limit");
    release();
    await waitFor(() => answered().length >= 20, 30_000, "20 upstream open responses");
    const first = answered();
    r.msgs.length = 0;
    expect(count(first, ResultCode.SESSION_NOT_FOUND)).toBe(4);
    expect(count(first, ResultCode.TOO_MANY_STREAMS)).toBe(16);
    refuse = false;
    const second = await pipelineUpstreamOpens(r, 6, 100);
    expect(count(second, ResultCode.SUCCEEDED)).toBe(4);
    expect(count(second, ResultCode.TOO_MANY_STREAMS)).toBe(2);
    r.ws.close();
  });

  it("pipelined downstream opens open at most maxDownstreamsPerConn streams", async () => {
    b = await startTestBroker({ limits: { maxDownstreamsPerConn: 16 } });
    const r = await connected(b);
    for (let i = 0; i < 100; i++)
      r.send({
        downstreamOpenRequest: {
          requestId: 2 + 2 * i,
          desiredStreamIdAlias: 1 + i,
          downstreamFilters: [{ sourceNodeId: NODE_U, dataFilters: ALL }],
        },
      });
    await waitFor(
      () => r.msgs.filter((m) => m.message === "downstreamOpenResponse").length >= 100,
      30_000,
      "downstream open responses",
    );
    const rs = r.msgs.filter((m) => m.message === "downstreamOpenResponse").map((m) => m.downstreamOpenResponse!);
    expect(count(rs, ResultCode.SUCCEEDED)).toBe(16);
    expect(count(rs, ResultCode.TOO_MANY_STREAMS)).toBe(84);
    r.ws.close();
  });
});
