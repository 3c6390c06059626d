// Upstream filters between a connector and the cloud, every variant, in their configured order; and a
// filter changed while points flow loses none of them.
import { afterAll, beforeAll, expect, it } from "vitest";
import { encodeIscpV2Frame } from "../../runtime/ipc/iscp-v2-compat.js";
import { cloudIndices, indexOf, range, writeNumbered } from "./points.js";
import { openFifoWriter, startStack, streamThroughRt, until, type CloudPoint, type Stack } from "./stack.js";

let s: Stack;
beforeAll(async () => {
  s = await startStack();
  await s.connect();
  await streamThroughRt(s);
  await s.put("/device-connectors/upstream", {
    id: "cam",
    format: "iscp-v2-compat",
    dest_ids: ["rt"],
    data_name_prefix: "cam/",
    ipc: { type: "fifo", path: s.fifo("cam") },
  });
}, 120_000);
afterAll(async () => s?.close());

const filter = (id: string, target: object, change_to: { type: string; [field: string]: unknown }) =>
  s.put("/filters/upstream", { id, type: change_to.type, target, change_to });
const nal = (type: number, body: number[]) => [0, 0, 0, 1, type, ...body];
const frame = (ms: number, type: string, name: string, payload: Buffer) =>
  encodeIscpV2Frame(100 + Math.floor(ms / 1000), (ms % 1000) * 1e6, type, name, payload);

async function write(fifo: string, frames: Buffer[]): Promise<void> {
  const fh = await openFifoWriter(s.fifo(fifo));
  try {
    await fh.write(Buffer.concat(frames));
  } finally {
    await fh.close();
  }
}

async function cloudPoints(count: number): Promise<CloudPoint[]> {
  return until(
    async () => {
      const all: CloudPoint[] = [];
      for (const m of await s.measurements()) all.push(...(await s.points(m.uuid)));
      return all.length >= count && all;
    },
    20_000,
    `${count} points in the cloud`,
  );
}

it("applies rename, sampling and h264-essential-nal-units by name, type, src-id and always", async () => {
  await filter(
    "rename-a",
    { type: "name", patterns: ["a/#"] },
    { type: "rename", strip_prefix: "a/", add_prefix: "r/" },
  );
  await filter("thin", { type: "type", patterns: ["float"] }, { type: "sampling", interval_ms: 10 });
  await filter("video", { type: "src-id", patterns: ["cam"] }, { type: "h264-essential-nal-units" });
  await filter("tag-all", { type: "always" }, { type: "rename", add_prefix: "all/" });

  // 100 float points 1 ms apart (sampling keeps one per 10 ms), 3 names under a/, 1 elsewhere.
  const frames: Buffer[] = [];
  for (let i = 0; i < 100; i++) frames.push(frame(i, "float", "speed", Buffer.from([i])));
  for (const n of ["a/x", "a/y/z", "b/x"]) frames.push(frame(200, "bytes", n, Buffer.from(n)));
  await write("dc", frames);
  // Access unit with SEI, SPS, PPS, IDR; then one with only a non-IDR slice (dropped whole).
  const au = [
    ...nal(6, [1, 2]),
    ...nal(0x67, [0x42, 0x00]),
    ...nal(0x68, [0xce]),
    ...nal(0x65, [0x88, 0x84]),
    ...nal(0x01, [0x9a]),
  ];
  await write("cam", [
    frame(300, "h264_frame", "video", Buffer.from(au)),
    frame(333, "h264_frame", "video", Buffer.from(nal(0x41, [0x9a, 0x02]))),
  ]);

  const points = await cloudPoints(10 + 3 + 1);
  await new Promise((r) => setTimeout(r, 500)); // nothing more arrives
  const again = await cloudPoints(0);
  expect(again.length).toBe(points.length);

  const names = points.map((p) => p.name).sort();
  expect(names).toEqual(["all/b/x", "all/cam/video", "all/r/x", "all/r/y/z", ...Array(10).fill("all/speed")]);
  const speeds = points
    .filter((p) => p.name === "all/speed")
    .map((p) => p.payload[0])
    .sort((a, b) => a! - b!);
  expect(speeds).toEqual(range(0, 10).map((i) => i * 10));
  const video = points.find((p) => p.name === "all/cam/video")!;
  expect([...video.payload]).toEqual([...nal(0x67, [0x42, 0x00]), ...nal(0x68, [0xce]), ...nal(0x65, [0x88, 0x84])]);
  for (const id of ["rename-a", "thin", "video", "tag-all"]) await s.agentApi.delete(`/filters/upstream/${id}`);
}, 120_000);

it("loses no point in flight when a filter changes", async () => {
  const before = (await cloudPoints(0)).length;
  await filter("tag", { type: "name", patterns: ["n"] }, { type: "rename", add_prefix: "x/" });
  const fh = await openFifoWriter(s.fifo("dc"));
  try {
    // The change lands while points are in the FIFO, in the filters and in the queue.
    await writeNumbered(fh, 0, 1000);
    await until(async () => (await cloudIndices(s, "/n")).length >= 200, 30_000, "some points through the old filter");
    await s.agentApi.patch("/filters/upstream/tag", { change_to: { type: "rename", add_prefix: "y/" } });
    await writeNumbered(fh, 1000, 2000);
  } finally {
    await fh.close();
  }
  const points = (await cloudPoints(before + 2000)).filter((p) => p.name.endsWith("/n"));
  expect(points.map(indexOf).sort((a, b) => a - b)).toEqual(range(0, 2000));
  // Each point went through exactly one version of the filter, old before new.
  expect(points.some((p) => p.name === "x/n") && points.some((p) => p.name === "y/n")).toBe(true);
  const lastX = Math.max(...points.filter((p) => p.name === "x/n").map(indexOf));
  const firstY = Math.min(...points.filter((p) => p.name === "y/n").map(indexOf));
  expect(lastX + 1).toBe(firstY);
  expect(await cloudIndices(s, "/n")).toHaveLength(2000);
}, 120_000);
