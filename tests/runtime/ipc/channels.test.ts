import { readFile } from "node:fs/promises";
import { join } from "node:path";
import * as Schema from "effect/Schema";
import { describe, expect, it } from "vitest";
import type { DataPoint } from "../../../runtime/datapoint.js";
import { FilterPipeline } from "../../../runtime/filters/pipeline.js";
import { FilterDefinition } from "../../../runtime/filters/schema.js";
import type { ChannelCallbacks } from "../../../runtime/ipc/channel.js";
import { downstreamChannelError, openDownstreamChannel } from "../../../runtime/ipc/downstream-channel.js";
import { DownstreamFanout } from "../../../runtime/ipc/downstream-fanout.js";
import { IscpV2CompatEncoder } from "../../../runtime/ipc/iscp-v2-compat.js";
import { Launch } from "../../../runtime/ipc/schema.js";
import { openUpstreamChannel, upstreamChannelError } from "../../../runtime/ipc/upstream-channel.js";
import { takeMeasurementClock } from "../../../runtime/ipc/clock.js";
import { ChunkBatcher } from "../../../runtime/datapath/chunk-batcher.js";
import { chunkPoints, decodeChunk } from "../../../runtime/queue/chunk-codec.js";
import { DurableQueue } from "../../../runtime/queue/store.js";
import { NODE_TS, SAMPLE_CONNECTOR, perTestDir, point, seqOf, waitFor } from "../../support/datapath.js";

let dir: string;
const stops = perTestDir((d) => (dir = d));

function recorder() {
  const events: string[] = [];
  let bytes = 0;
  const cb: ChannelCallbacks = {
    opened: () => events.push("opened"),
    closed: (r) => events.push(`closed: ${r}`),
    failed: (r) => events.push(`failed: ${r}`),
    data: (b) => (bytes += b),
  };
  return { cb, events, bytes: () => bytes };
}

const launchSample = (args: string[]) =>
  Schema.decodeUnknownSync(Launch)({
    command: NODE_TS[0],
    args: [...NODE_TS.slice(1), SAMPLE_CONNECTOR, ...args],
    restart: { policy: "on-failure" },
  });

describe("upstream channel", () => {
  it("launches the connector, filters, and accepts points only once durable in LMDB", async () => {
    const q = await DurableQueue.open({ dir: join(dir, "q"), capacityMiB: 64, limitDataStorage: true });
    stops.push(() => q.close());
    q.startMeasurement("44444444-4444-4444-8444-444444444444", 0n);
    const seq = q.openSequence("44444444-4444-4444-8444-444444444444", "up-1", "s", true).ord;
    const batcher = new ChunkBatcher(q, seq, { flushPolicy: "interval", flushIntervalMs: 5 });
    const filters = new FilterPipeline([
      Schema.decodeUnknownSync(FilterDefinition)({
        id: "r",
        type: "rename",
        target: { type: "name", patterns: ["dc/#"] },
        change_to: { type: "rename", strip_prefix: "dc/", add_prefix: "car/" },
      }),
    ]);
    const routed: string[][] = [];
    const { cb, events, bytes } = recorder();
    const clock = takeMeasurementClock();
    const ch = openUpstreamChannel(
      {
        clockBase: clock.clockBase,
        settings: {
          id: "dc-1",
          data_name_prefix: "dc/",
          format: "iscp-v2-compat",
          ipc: { type: "fifo", path: join(dir, "up.fifo") },
          launch: launchSample(["--rate", "0", "--count", "20000", "--name", "speed"]),
          dest_ids: ["up-1"],
        },
        filters,
        sink: (points, destIds) => {
          routed.push([...destIds]);
          return batcher.push(points);
        },
      },
      cb,
    );
    stops.push(() => ch.close());
    await waitFor(() => ch.stats.accepted === 20000, 30_000, "20000 accepted");
    expect(events[0]).toBe("opened");
    await waitFor(
      () => events.some((e) => e.startsWith("closed: device connector exited with code 0")),
      30_000,
      "exit reported",
    );
    expect(bytes()).toBe(ch.stats.bytes);
    expect(routed.every((d) => d.length === 1 && d[0] === "up-1")).toBe(true);
    const stored = q.readChunks(seq, 0, 1e6).flatMap((c) => chunkPoints(decodeChunk(c.data)));
    expect(stored.length).toBe(20000);
    expect(stored.every((p, i) => p.name === "car/speed" && seqOf(p) === i)).toBe(true);
    // Connector timestamps (CLOCK_MONOTONIC) became elapsed times from the base time taken before it started.
    expect(stored.every((p) => p.elapsedNs > 0 && p.elapsedNs < 20e9)).toBe(true);
    expect(ch.stats.connector).toMatchObject({ running: false, finished: true });
    expect(upstreamChannelError(ch.stats)).toBe("");
  });

  it("stops reading while the sink has not accepted, so the connector waits instead of memory growing", async () => {
    const waiting: Array<() => void> = [];
    let got = 0;
    const { cb } = recorder();
    const ch = openUpstreamChannel(
      {
        settings: {
          id: "dc-2",
          data_name_prefix: "",
          format: "iscp-v2-compat",
          ipc: { type: "fifo", path: join(dir, "up.fifo") },
          launch: launchSample(["--rate", "0", "--count", "2000000"]),
          dest_ids: ["deferred"],
        },
        maxPendingBatches: 4,
        sink: (points) => {
          got += points.length;
          return new Promise<void>((r) => waiting.push(r));
        },
      },
      cb,
    );
    stops.push(() => ch.close());
    await waitFor(() => ch.stats.pendingBatches === 4, 30_000, "window full");
    await new Promise((r) => setTimeout(r, 300));
    const stalled = ch.stats.bytes;
    expect(got).toBeLessThan(2_000_000);
    await new Promise((r) => setTimeout(r, 300));
    expect(ch.stats.bytes).toBe(stalled); // not reading: the pipe is full and the connector blocks
    for (const r of waiting.splice(0)) r();
    await waitFor(() => ch.stats.bytes > stalled, 30_000, "reading again");
    expect(
      upstreamChannelError({ ...ch.stats, corrupt: 2, skippedBytes: 9, rejected: 3, lastError: "disk full" }),
    ).toBe("2 corrupt frame region(s) skipped (9 bytes); 3 point(s) not accepted: disk full");
  });

  it("reports a FIFO that cannot be created as failed", async () => {
    const { cb, events } = recorder();
    const { writeFile } = await import("node:fs/promises");
    await writeFile(join(dir, "file"), "x");
    const ch = openUpstreamChannel(
      {
        settings: {
          id: "dc-3",
          data_name_prefix: "",
          format: "logger-msg",
          ipc: { type: "fifo", path: join(dir, "file") },
          dest_ids: ["u"],
        },
        sink: () => {},
      },
      cb,
    );
    stops.push(() => ch.close());
    await waitFor(() => events.length > 0, 30_000, "failed");
    expect(events[0]).toMatch(/^failed: .*not a FIFO/);
  });
});

describe("downstream channel", () => {
  it("writes prefixed points to a launched connector, prefix removed, and flushes on close", async () => {
    const out = join(dir, "got.bin");
    const { cb, events, bytes } = recorder();
    const ch = openDownstreamChannel(
      {
        settings: {
          id: "dc-down",
          data_name_prefix: "ctl/",
          format: "iscp-v2-compat",
          ipc: { type: "fifo", path: join(dir, "down.fifo") },
          launch: Schema.decodeUnknownSync(Launch)({
            command: "sh",
            args: ["-c", 'exec cat "$EDGE_AGENT_IPC_PATH" > "$0"', out],
          }),
        },
      },
      cb,
    );
    stops.push(() => ch.close());
    const points: DataPoint[] = [
      point("ctl/steer", "float64", Buffer.alloc(8, 1), 5e9),
      point("other/x", "string", "no", 1),
      point("ctl/brake", "bool", Buffer.from([1]), 6e9),
    ];
    expect(ch.write(points)).toBe(2);
    await waitFor(() => events.includes("opened"), 30_000, "connector opened the FIFO");
    await ch.close(); // what is queued still reaches the connector, which then ends at EOF
    expect(ch.stats.written).toBe(2);
    const expected = new IscpV2CompatEncoder().encode(points, "ctl/").buffer;
    expect((await readFile(out)).equals(expected)).toBe(true);
    expect(bytes()).toBe(expected.length);
    expect(downstreamChannelError(ch.stats)).toBe("");
    expect(ch.write([point("ctl/late", "string", "x", 1)])).toBe(0); // closed: dropped and counted
    expect(downstreamChannelError(ch.stats)).toBe("1 frame(s) dropped (connector absent or too slow)");
  });
});

describe("downstream fan-out", () => {
  it("applies the downstream filters once, then writes to each dest channel; unknown ids are counted", () => {
    const filters = new FilterPipeline([
      Schema.decodeUnknownSync(FilterDefinition)({
        id: "s",
        type: "sampling",
        target: { type: "always" },
        change_to: { type: "sampling", interval_ms: 1000 },
      }),
    ]);
    const got: Record<string, string[]> = { a: [], b: [] };
    const fan = new DownstreamFanout(filters);
    fan.set("a", { write: (ps) => (got.a!.push(...ps.map((p) => p.name)), ps.length) });
    fan.set("b", { write: (ps) => (got.b!.push(...ps.map((p) => p.name)), ps.length) });
    const frames = fan.deliver(
      [point("x", "t", "", 0), point("x", "t", "", 1), point("y", "t", "", 2)],
      ["a", "b", "gone"],
    );
    expect(frames).toBe(4);
    expect(got).toEqual({ a: ["x", "y"], b: ["x", "y"] });
    expect(fan.unrouted.get("gone")).toBe(2);
  });
});
