// `--commit-trace` on a full disk: the failed write ends the trace, not the peer (an unheard stream error would
// end the process, as a full data directory did to a cloud started with the trace inside it).
import { expect, it } from "vitest";
import { openCommitTrace } from "../../../cloud/measurements/ingest/commit-trace.js";

it("keeps running and closes when the trace file cannot be written (ENOSPC)", async () => {
  const trace = await openCommitTrace("/dev/full"); // every write fails with ENOSPC
  trace.committed(5);
  await new Promise((r) => setTimeout(r, 100));
  trace.committed(6);
  await expect(trace.close()).resolves.toBeUndefined();
});
