// The peers' end point, the same as ours: what the consumer receives is stored by the cloud's own storage code
// (cloud/database/db.ts with the durability the cloud runs with, its measurement schema, and the broker's
// group-committing UpstreamStore), one chunk per received message, and a point counts once its chunk committed.
import crypto from "node:crypto";
import path from "node:path";
import { SqliteDb as Db, type Durability } from "../../cloud/database/db.js";
import { migrate } from "../../cloud/database/migrate.js";
import { createLogger } from "../../cloud/logger.js";
import { migrations } from "../../cloud/measurements/repo/migrations.js";
import { MeasurementsService } from "../../cloud/measurements/service/measurements-service.js";
import { PayloadFiles } from "../../cloud/measurements/storage/payload-files.js";
import type { UpstreamRef } from "../../cloud/measurements/ingest/upstream-store.js";

const DATA_ID = { name: "sample/counter", type: "bytes" };

export interface Sink {
  /** Stores one received message's points as one chunk; resolves once it committed. */
  store(points: readonly Uint8Array[], elapsedNs: bigint): Promise<void>;
  /** Points received but not committed yet. */
  readonly pending: number;
  close(): Promise<void>;
}

export async function openSink(dir: string, durability: Durability): Promise<Sink> {
  const db = await Db.open(path.join(dir, "cloud.db"), { durability });
  await migrate(db, migrations);
  const files = await PayloadFiles.open(path.join(dir, "chunks"));
  const svc = new MeasurementsService(db, createLogger("warn"), files);
  const up: UpstreamRef = {
    streamId: crypto.randomUUID(),
    sessionId: crypto.randomUUID(),
    projectUuid: crypto.randomUUID(),
    nodeId: crypto.randomUUID(),
    persist: true,
  };
  let sequenceNumber = 0;
  let pending = 0;
  return {
    get pending() {
      return pending;
    },
    async store(points, elapsedNs) {
      pending += points.length;
      try {
        const dataPoints = points.map((payload) => ({ elapsedTime: elapsedNs, payload }));
        const r = await svc.storeUpstreamChunk(up, {
          sequenceNumber: ++sequenceNumber,
          dataPointGroups: [{ dataId: DATA_ID, dataPoints }],
        });
        if (r !== "ok") throw new Error(`chunk ${sequenceNumber} not stored: ${r}`);
      } finally {
        pending -= points.length;
      }
    },
    async close() {
      await svc.close();
      await db.close();
    },
  };
}
