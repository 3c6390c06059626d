// The command API's view of measurements (list, get, delete), backed by the durable queue: what the
// agent holds, with the data not yet uploaded. The measurement in progress cannot be deleted.
import { conflict } from "../api/agent-errors.js";
import type { MeasurementInfo } from "../queue/records.js";
import { nanosToRfc3339, type MeasurementCatalog } from "../settings/measurements.js";
import type { Measurement } from "../settings/schemas.js";
import type { DataPath } from "./datapath.js";

const view = (m: MeasurementInfo): Measurement => ({
  uuid: m.uuid,
  base_time: nanosToRfc3339(BigInt(m.baseTimeNs)),
  pending_data_size: m.pendingDataSize,
  chunk_count: m.chunkCount,
});

export class QueueMeasurementCatalog implements MeasurementCatalog {
  constructor(private readonly dp: DataPath) {}

  list(): Measurement[] {
    return this.dp.queue.listMeasurements().map(view);
  }

  get(uuid: string): Measurement | undefined {
    const m = this.dp.queue.getMeasurement(uuid.toLowerCase());
    return m && view(m);
  }

  async remove(uuid: string): Promise<boolean> {
    const key = uuid.toLowerCase();
    const cur = this.dp.current;
    if (cur !== undefined && !cur.isEnded && cur.uuid === key)
      throw conflict(`measurement "${key}" is in progress: disable its upstream device-connector channels first`);
    return this.dp.queue.deleteMeasurement(key);
  }
}
