// The hand-written UpstreamChunkAck encoder writes what protobufjs writes, byte for byte.
import { expect, it } from "vitest";
import { encodeResultsAck } from "../../../cloud/iscp/broker/ack-frame.js";
import { decodeMessage, encodeMessage, ResultCode } from "../../../proto/wire/message.js";

it("encodes results-only acks exactly as protobufjs does", () => {
  const cases = [
    { alias: 1, results: [{ sequenceNumber: 1, resultCode: ResultCode.SUCCEEDED, resultString: "OK" }] },
    { alias: 0, results: [] },
    {
      alias: 300,
      results: [
        {
          sequenceNumber: 4_294_967_295,
          resultCode: ResultCode.PROCESS_FAILED,
          resultString: "the server's storage is full",
        },
      ],
    },
    {
      alias: 2 ** 31,
      results: Array.from({ length: 200 }, (_, i) => ({
        sequenceNumber: i * 1000,
        resultCode: i % 7,
        resultString: i % 3 ? "OK" : `käse ${"x".repeat(i)} 🚗`,
      })),
    },
    { alias: 5, results: [{ sequenceNumber: 9, resultCode: ResultCode.INVALID_DATA_ID_ALIAS, resultString: "" }] },
  ];
  for (const c of cases) {
    const ours = encodeResultsAck(c.alias, c.results);
    const theirs = encodeMessage({ upstreamChunkAck: { streamIdAlias: c.alias, results: c.results } }, "proto");
    expect(Buffer.from(ours).equals(Buffer.from(theirs)), `alias ${c.alias}`).toBe(true);
    expect(decodeMessage(ours, "proto").upstreamChunkAck!.results!.length).toBe(c.results.length);
  }
});
