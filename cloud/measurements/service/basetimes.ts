// Base-time operations: by type (one base time of each type is addressed) and by numeric id.
import { Conflict, Invalid, NotFound } from "../../errors.js";
import type { Queryable } from "../../database/db.js";
import { isUniqueViolation } from "../../database/db.js";
import {
  DEFAULT_PRIORITY,
  isBaseTimeType,
  measurementLock,
  renderBaseTime,
  splitNs,
  typeOfName,
  type BaseTimeRow,
} from "./model.js";
import * as repo from "../repo/measurements.js";
import type { MeasurementStore } from "./measurement-store.js";
import type { MeasurementState } from "./events.js";
import { nowIso } from "../formats/time.js";

export interface BaseTimeInput {
  basetimeNs?: bigint;
  priority?: number;
  name?: string;
  elapsed_time?: number;
}

export type MeasBaseTime = ReturnType<typeof renderBaseTime>;

const baseTimeNotFound = () => new NotFound("base time not found");
const nameTaken = () => new Conflict("a base time with this name already exists", { name: "already exists" });

/** `{type}` path segments also accept a numeric id (the v2.6 ByID operations share the path). */
async function find(q: Queryable, measUuid: string, key: string): Promise<BaseTimeRow> {
  let row: BaseTimeRow | undefined;
  if (/^\d{1,15}$/.test(key)) row = await repo.baseTimeById(q, measUuid, Number(key));
  else if (isBaseTimeType(key)) row = await repo.baseTimeByType(q, measUuid, key);
  else
    throw new Invalid(`invalid path parameter: type: expected one of the base time types or a numeric id`, {
      type: "invalid",
    });
  if (!row) throw baseTimeNotFound();
  return row;
}

export class BaseTimeService {
  constructor(private readonly store: MeasurementStore) {}

  private async write<T>(
    project: string,
    measUuid: string,
    fn: (tx: Queryable, id: string, now: string) => Promise<T>,
  ): Promise<T> {
    let id = "";
    let result: T;
    let state: MeasurementState;
    try {
      [result, state] = await this.store.db.transaction(async (tx) => {
        const m = await this.store.require(tx, project, measUuid);
        id = m.uuid;
        const now = nowIso();
        const r = await fn(tx, id, now);
        await repo.refreshBaseTime(tx, id);
        await repo.touchMeasurement(tx, id, now);
        return [r, await this.store.stateIn(tx, id)] as const;
      }, measurementLock(measUuid));
    } catch (err) {
      if (isUniqueViolation(err)) throw nameTaken();
      throw err;
    }
    this.store.events.publish(id, project, state);
    return result;
  }

  async list(project: string, measUuid: string): Promise<{ items: MeasBaseTime[] }> {
    const m = await this.store.require(this.store.db, project, measUuid);
    return { items: (await repo.listBaseTimes(this.store.db, m.uuid)).map(renderBaseTime) };
  }

  async get(project: string, measUuid: string, key: string): Promise<MeasBaseTime> {
    const m = await this.store.require(this.store.db, project, measUuid);
    return renderBaseTime(await find(this.store.db, m.uuid, key));
  }

  /** POST: all four fields required; the type follows the name. */
  create(project: string, measUuid: string, input: Required<BaseTimeInput>): Promise<MeasBaseTime> {
    return this.write(project, measUuid, async (tx, id, now) => {
      if (await repo.baseTimeByName(tx, id, input.name)) throw nameTaken();
      const { s, nanos } = splitNs(input.basetimeNs);
      const rowId = await repo.insertBaseTime(
        tx,
        id,
        {
          type: typeOfName(input.name),
          name: input.name,
          priority: input.priority,
          s,
          nanos,
          elapsedNs: input.elapsed_time,
        },
        now,
      );
      return renderBaseTime((await repo.baseTimeById(tx, id, rowId))!);
    });
  }

  /** PUT by type: replaces the given fields, creating the base time of that type when there is none. */
  put(project: string, measUuid: string, type: string, input: BaseTimeInput): Promise<MeasBaseTime> {
    return this.write(project, measUuid, async (tx, id, now) => {
      const existing = await repo.baseTimeByType(tx, id, type);
      if (!existing && input.basetimeNs === undefined)
        throw new Invalid("invalid body: basetime: required to create a base time", { basetime: "required" });
      const rowId = await this.apply(tx, id, existing, type, input, now);
      return renderBaseTime((await repo.baseTimeById(tx, id, rowId))!);
    });
  }

  /** PATCH by id. */
  patch(project: string, measUuid: string, key: string, input: BaseTimeInput): Promise<MeasBaseTime> {
    return this.write(project, measUuid, async (tx, id, now) => {
      if (!/^\d{1,15}$/.test(key))
        throw new Invalid("invalid path parameter: id: expected a numeric id", { id: "invalid" });
      const existing = await find(tx, id, key);
      const rowId = await this.apply(tx, id, existing, existing.type, input, now);
      return renderBaseTime((await repo.baseTimeById(tx, id, rowId))!);
    });
  }

  private async apply(
    tx: Queryable,
    id: string,
    existing: BaseTimeRow | undefined,
    type: string,
    input: BaseTimeInput,
    now: string,
  ) {
    const name = input.name ?? existing?.name ?? type;
    const other = await repo.baseTimeByName(tx, id, name);
    if (other && other.id !== existing?.id) throw nameTaken();
    const split = input.basetimeNs !== undefined ? splitNs(input.basetimeNs) : undefined;
    const values = {
      type,
      name,
      priority: input.priority ?? existing?.priority ?? DEFAULT_PRIORITY[type] ?? 0,
      s: split?.s ?? existing!.basetime_s,
      nanos: split?.nanos ?? existing!.basetime_nanos,
      elapsedNs: input.elapsed_time ?? existing?.elapsed_time_ns ?? 0,
    };
    if (existing) {
      await repo.updateBaseTime(tx, existing.id, values, now);
      return existing.id;
    }
    return repo.insertBaseTime(tx, id, values, now);
  }

  /**
   * Deleting the base time in use hands the measurement to the highest-priority one left (write()
   * refreshes); with none left the measurement keeps that time and type, with no base time selected,
   * until one is created (the intdash SDK's import deletes them all and creates them again).
   */
  async remove(project: string, measUuid: string, key: string): Promise<void> {
    await this.write(project, measUuid, async (tx, id) => {
      const row = await find(tx, id, key);
      const m = (await repo.findMeasurement(tx, id))!;
      await repo.deleteBaseTimeRow(tx, row.id);
      if (m.basetime_id === row.id) await repo.unsetBaseTime(tx, id);
    });
  }

  /** The broker's metadata: upserts the base time of that name (an empty name is edge_rtc). */
  async upsertByName(
    tx: Queryable,
    measUuid: string,
    b: { name: string; priority: number; baseTimeNs: bigint; elapsedNs: number },
    now: string,
  ) {
    const name = b.name || "edge_rtc";
    const existing = await repo.baseTimeByName(tx, measUuid, name);
    const { s, nanos } = splitNs(b.baseTimeNs);
    const values = {
      type: existing?.type ?? typeOfName(name),
      name,
      priority: b.priority,
      s,
      nanos,
      elapsedNs: b.elapsedNs,
    };
    if (existing) await repo.updateBaseTime(tx, existing.id, values, now);
    else await repo.insertBaseTime(tx, measUuid, values, now);
    await repo.refreshBaseTime(tx, measUuid);
  }
}
