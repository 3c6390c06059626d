// Sequences and chunk uploads over REST.
import { NotFound } from "../../errors.js";
import type { ChunkUpload } from "../formats/codec.js";
import { writeChunks } from "../storage/chunk-write.js";
import { measurementLock, renderSequence } from "./model.js";
import { refreshStatus } from "../repo/measurements.js";
import {
  ensureSequence,
  findSequence,
  listSequences,
  setExpectations,
  type SequenceExpectations,
} from "../repo/sequences.js";
import type { MeasurementStore } from "./measurement-store.js";
import { nowIso } from "../formats/time.js";

export type MeasurementSequenceGroup = ReturnType<typeof renderSequence>;

const sequenceNotFound = () => new NotFound("sequence not found");

export class SequenceService {
  constructor(private readonly store: MeasurementStore) {}

  async list(
    project: string,
    measUuid: string,
  ): Promise<{ items: MeasurementSequenceGroup[]; page: { total_count: number } }> {
    const m = await this.store.require(this.store.db, project, measUuid);
    const rows = await listSequences(this.store.db, m.uuid);
    return { items: rows.map(renderSequence), page: { total_count: rows.length } };
  }

  async get(project: string, measUuid: string, seqUuid: string): Promise<MeasurementSequenceGroup> {
    const m = await this.store.require(this.store.db, project, measUuid);
    const s = await findSequence(this.store.db, m.uuid, seqUuid.toLowerCase());
    if (!s) throw sequenceNotFound();
    return renderSequence(s);
  }

  /** PUT creates or replaces (absent fields are cleared); PATCH updates an existing sequence. */
  async write(project: string, measUuid: string, seqUuid: string, e: SequenceExpectations, mode: "replace" | "patch") {
    let id = "";
    const out = await this.store.db.transaction(async (tx) => {
      const m = await this.store.require(tx, project, measUuid);
      id = m.uuid;
      const now = nowIso();
      const uuid = seqUuid.toLowerCase();
      let s = await findSequence(tx, id, uuid);
      if (!s && mode === "patch") throw sequenceNotFound();
      s ??= await ensureSequence(tx, id, uuid, now);
      const values =
        mode === "replace"
          ? {
              expected_data_points: e.expected_data_points ?? null,
              final_sequence_number: e.final_sequence_number ?? null,
            }
          : e;
      await setExpectations(tx, s.id, values, now);
      await refreshStatus(tx, id, now);
      return [renderSequence((await findSequence(tx, id, uuid))!), await this.store.stateIn(tx, id)] as const;
    }, measurementLock(measUuid));
    // Expectations met complete an ended measurement: its event carries that.
    this.store.events.publish(id, project, out[1]);
    return out[0];
  }

  /** One transaction per upload; the measurement must exist in the project, the sequence is created on first use. */
  async storeChunks(project: string, upload: ChunkUpload) {
    const started = performance.now();
    const { results, stored, points, state } = await this.store.db.transaction(async (tx) => {
      await this.store.require(tx, project, upload.measUuid);
      const now = nowIso();
      const w = await writeChunks(tx, this.store.files, upload.measUuid, upload.sequenceUuid, upload.chunks, now);
      const status = w.stored > 0 ? await refreshStatus(tx, upload.measUuid, now) : undefined;
      // Chunks that complete an ended measurement: its event carries that, at once (events.ts).
      const state =
        status && status.after !== status.before ? await this.store.stateIn(tx, upload.measUuid) : undefined;
      return { ...w, state };
    }, measurementLock(upload.measUuid));
    if (stored > 0) this.store.commits?.committed(stored, points, (performance.now() - started) / 1000);
    if (results.includes("ok")) this.store.events.publishData(upload.measUuid, project, state);
    const items = upload.chunks.map((c, i) => ({ sequence_number: c.sequenceNumber, result: results[i]! }));
    return { items, total_count: items.length };
  }
}
