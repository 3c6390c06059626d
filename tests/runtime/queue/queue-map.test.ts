// The queue's file is mapped into memory once, however much it grows within its capacity: lmdb-js alone maps
// it again at every doubling and keeps the earlier maps, so the file's pages counted in the RSS once per map.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { queueMapBytes, QUEUE_LMDB } from "../../../runtime/queue/queue-env.js";
import { DurableQueue } from "../../../runtime/queue/store.js";
import { pts, queueDirs } from "./helpers.js";

const t = queueDirs();

/** This process's maps of the queue's file (Linux: /proc/self/maps names the file of each map). */
function mapsOf(file: string): string[] {
  const real = fs.realpathSync(file);
  return fs
    .readFileSync("/proc/self/maps", "utf8")
    .split("\n")
    .filter((l) => l.endsWith(` ${real}`));
}

describe("queue map", () => {
  it("maps the queue's file once while it grows from nothing to tens of MiB", async () => {
    const queue = t.track(await DurableQueue.open({ dir: t.dir(), capacityMiB: 1024, limitDataStorage: true }));
    queue.startMeasurement("11111111-1111-4111-8111-111111111111", 0n);
    const seq = queue.openSequence("11111111-1111-4111-8111-111111111111", "up", "s", true);
    // 24 MiB of chunks kept (never acknowledged): the file passes 128 KiB, 256 KiB, ... 16 MiB.
    for (let i = 0; i < 48; i++) await queue.append(seq.ord, pts(8, `b${i}`, 64 * 1024)).durable;
    const file = path.join(t.dir(), QUEUE_LMDB);
    expect(fs.statSync(file).size).toBeGreaterThan(24 * 1024 * 1024);
    expect(queue.readChunks(seq.ord, 47, 1)).toHaveLength(1); // read through the map
    expect(mapsOf(file)).toHaveLength(1);
  });

  it("reserves the configured capacity and a quarter more, between 1 and 16 GiB, on 64-bit processes", () => {
    const GiB = 1024 ** 3;
    if (!process.arch.endsWith("64")) return expect(queueMapBytes(1024)).toBeUndefined();
    expect([10, 1024, 2048, 10240, 102400].map(queueMapBytes)).toEqual([GiB, 2 * GiB, 3 * GiB, 13 * GiB, 16 * GiB]);
  });
});
