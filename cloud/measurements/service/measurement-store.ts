// Measurement operations behind the REST routes and the broker: transactions, status, events.
// Handlers call this; SQL lives in the repo-*.ts files.
import type { Logger } from "pino";
import { Conflict, Forbidden, Invalid, NotFound } from "../../errors.js";
import type { Db, Queryable } from "../../database/db.js";
import { isUniqueViolation } from "../../database/db.js";
import { DELETED, measurementState, type MeasurementEvents, type MeasurementState } from "./events.js";
import type { PayloadFiles } from "../storage/payload-files.js";
import { DEFAULT_PRIORITY, measurementLock, renderMeasurement, splitNs, type MeasRow } from "./model.js";
import * as repo from "../repo/measurements.js";
import { listMeasurements, type MeasurementFilter } from "../repo/measurement-list.js";
import { listSequences } from "../repo/sequences.js";
import { nowIso } from "../formats/time.js";
import type { CommitObserver } from "../ingest/commit-observer.js";

export interface CreateMeasurementInput {
  name?: string;
  description?: string;
  basetimeNs: bigint;
  basetime_type: string;
  basetime_priority?: number;
  basetime_name?: string;
  basetime_elapsed_time?: number;
  edge_uuid: string;
  protected?: boolean;
}

export interface ReplaceMeasurementInput {
  name?: string;
  description?: string;
  basetime_type?: string;
}

export type Measurement = ReturnType<typeof renderMeasurement>;

export const measurementNotFound = () => new NotFound("measurement not found");

export class MeasurementStore {
  constructor(
    readonly db: Db,
    readonly events: MeasurementEvents,
    readonly log: Logger,
    /** Where chunk payloads are written (payload-files.ts). */
    readonly files: PayloadFiles,
    /** Told about each committed batch of chunks. */
    readonly commits?: CommitObserver,
  ) {}

  /** The measurement of that project, or 404 (also when it belongs to another project). */
  async require(q: Queryable, project: string, uuid: string): Promise<MeasRow> {
    const m = await repo.findMeasurement(q, uuid.toLowerCase());
    if (!m || m.project_uuid !== project) throw measurementNotFound();
    return m;
  }

  async render(q: Queryable, m: MeasRow): Promise<Measurement> {
    return renderMeasurement(m, await repo.totalsOf(q, m.uuid));
  }

  async get(project: string, uuid: string): Promise<Measurement> {
    const m = await this.require(this.db, project, uuid);
    return this.render(this.db, m);
  }

  /** What a transaction committed to the measurement, for its event (events.ts). */
  async stateIn(tx: Queryable, uuid: string): Promise<MeasurementState> {
    return measurementState(await repo.findMeasurement(tx, uuid));
  }

  /** The measurement as webhooks see it now: deleted when it is gone (or another project's). */
  async state(project: string, uuid: string): Promise<MeasurementState> {
    const m = await repo.findMeasurement(this.db, uuid.toLowerCase());
    return measurementState(m?.project_uuid === project ? m : undefined);
  }

  async create(
    project: string,
    input: CreateMeasurementInput,
    uuid: string = crypto.randomUUID(),
  ): Promise<Measurement> {
    const id = uuid.toLowerCase();
    const now = nowIso();
    let state: MeasurementState;
    try {
      state = await this.db.transaction(async (tx) => {
        if (await repo.findMeasurement(tx, id))
          throw new Conflict("a measurement with this UUID already exists", { measurement_uuid: "already exists" });
        await repo.insertMeasurement(tx, {
          uuid: id,
          project_uuid: project,
          name: input.name ?? "",
          description: input.description ?? "",
          edge_uuid: input.edge_uuid.toLowerCase(),
          protected: input.protected ?? false,
          now,
        });
        const { s, nanos } = splitNs(input.basetimeNs);
        await repo.insertBaseTime(
          tx,
          id,
          {
            type: input.basetime_type,
            name: input.basetime_name ?? input.basetime_type,
            priority: input.basetime_priority ?? DEFAULT_PRIORITY[input.basetime_type] ?? 0,
            s,
            nanos,
            elapsedNs: input.basetime_elapsed_time ?? 0,
          },
          now,
        );
        await repo.refreshBaseTime(tx, id);
        return this.stateIn(tx, id);
      }, measurementLock(id));
    } catch (err) {
      if (isUniqueViolation(err))
        throw new Conflict("a measurement with this UUID already exists", { measurement_uuid: "already exists" });
      throw err;
    }
    this.events.publish(id, project, state);
    return this.get(project, id);
  }

  async list(filter: MeasurementFilter): Promise<{ items: Measurement[]; total: number }> {
    const { rows, total } = await listMeasurements(this.db, filter);
    const totals = await repo.totalsOfMany(
      this.db,
      rows.map((r) => r.uuid),
    );
    return { items: rows.map((r) => renderMeasurement(r, totals.get(r.uuid)!)), total };
  }

  async update(project: string, uuid: string, input: ReplaceMeasurementInput): Promise<void> {
    let id = "";
    const state = await this.db.transaction(async (tx) => {
      const m = await this.require(tx, project, uuid);
      id = m.uuid;
      const now = nowIso();
      if (input.basetime_type !== undefined) {
        const bt = await repo.baseTimeByType(tx, id, input.basetime_type);
        if (!bt)
          throw new Invalid(`the measurement has no base time of type ${input.basetime_type}`, {
            basetime_type: "no such base time",
          });
        // The deprecated field raises that base time above all others.
        const top = await repo.maxPriority(tx, id);
        if (m.basetime_id !== bt.id || bt.priority < top)
          await repo.updateBaseTime(tx, bt.id, { ...fromRow(bt), priority: top + 1 }, now);
        await repo.refreshBaseTime(tx, id);
      }
      await repo.patchMeasurement(tx, id, { name: input.name, description: input.description }, now);
      return this.stateIn(tx, id);
    }, measurementLock(uuid));
    this.events.publish(id, project, state);
  }

  async setProtected(project: string, uuid: string, value: boolean): Promise<void> {
    const m = await this.require(this.db, project, uuid);
    await repo.patchMeasurement(this.db, m.uuid, { protected: value }, nowIso());
    this.events.publish(m.uuid, project);
  }

  async remove(project: string, uuid: string): Promise<void> {
    let id = "";
    let sequences: number[] = [];
    await this.db.transaction(async (tx) => {
      const m = await this.require(tx, project, uuid);
      if (m.protected) throw new Forbidden("the measurement is protected: unprotect it before deleting it");
      id = m.uuid;
      sequences = (await listSequences(tx, id)).map((s) => s.id);
      await repo.deleteMeasurementRow(tx, id);
    }, measurementLock(uuid));
    // Told before the files go (events.ts: no await between a commit and its event).
    this.events.publish(id, project, DELETED);
    // Once the delete committed (a crash before this leaves files the next start sweeps).
    await this.files
      .remove(sequences)
      .catch((err: unknown) =>
        this.log.warn({ err, measurement: id }, "payload files of a deleted measurement stay on disk"),
      );
  }

  /** The edge stopped acquiring: resending until every sequence has what it expects, then completed. */
  async end(project: string, uuid: string): Promise<{ status: string }> {
    let status = "";
    let id = "";
    const state = await this.db.transaction(async (tx) => {
      const m = await this.require(tx, project, uuid);
      id = m.uuid;
      const now = nowIso();
      await repo.patchMeasurement(tx, id, { ended: true }, now);
      status = (await repo.refreshStatus(tx, id, now))!.after;
      return this.stateIn(tx, id);
    }, measurementLock(uuid));
    this.events.publish(id, project, state);
    return { status };
  }

  async complete(project: string, uuid: string): Promise<Measurement> {
    let id = "";
    const state = await this.db.transaction(async (tx) => {
      const m = await this.require(tx, project, uuid);
      id = m.uuid;
      const now = nowIso();
      await repo.patchMeasurement(tx, id, { ended: true, completed: true }, now);
      await repo.refreshStatus(tx, id, now);
      return this.stateIn(tx, id);
    }, measurementLock(uuid));
    this.events.publish(id, project, state);
    return this.get(project, id);
  }
}

export const fromRow = (b: {
  type: string;
  name: string;
  priority: number;
  basetime_s: number;
  basetime_nanos: number;
  elapsed_time_ns: number;
}) => ({
  type: b.type,
  name: b.name,
  priority: b.priority,
  s: b.basetime_s,
  nanos: b.basetime_nanos,
  elapsedNs: b.elapsed_time_ns,
});
