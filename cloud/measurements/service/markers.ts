// Measurement markers (intdash MeasurementMarker): a point marker has one time, a range marker a start and
// an end, both as elapsed microseconds after the measurement's base time; name, description and a tag of
// string pairs. Writes lock their measurement like every other write of it.
import crypto from "node:crypto";
import { Invalid, NotFound } from "../../errors.js";
import type { Queryable } from "../../database/db.js";
import { measurementLock } from "./model.js";
import * as repo from "../repo/markers.js";
import type { MarkerRow, MarkerValues, ProjectMarkerRow } from "../repo/markers.js";
import type { MeasurementStore } from "./measurement-store.js";
import { nowIso } from "../formats/time.js";

export interface MarkerInput {
  name?: string;
  description?: string;
  type?: "point" | "range";
  tag?: Readonly<Record<string, string>>;
  detail?: { occurred_elapsed_time?: number; start_elapsed_time?: number; end_elapsed_time?: number };
}

export function renderMarker(r: MarkerRow) {
  return {
    uuid: r.uuid,
    name: r.name,
    description: r.description,
    type: r.type,
    detail:
      r.type === "point"
        ? { occurred_elapsed_time: r.occurred_us ?? 0 }
        : { start_elapsed_time: r.start_us ?? 0, end_elapsed_time: r.end_us ?? 0 },
    tag: JSON.parse(r.tag) as Record<string, string>,
    created_at: r.created_at,
    created_by: r.created_by,
    updated_at: r.updated_at,
    updated_by: r.updated_by,
  };
}

export type MeasurementMarker = ReturnType<typeof renderMarker>;

const markerNotFound = () => new NotFound("measurement marker not found");

/** The stored values after applying `input` to `existing` (none on create); refuses what is missing or inconsistent. */
function valuesOf(input: MarkerInput, existing: MarkerRow | undefined): MarkerValues {
  const type = input.type ?? existing?.type;
  if (!type) throw new Invalid("invalid body: type: required (point or range)", { type: "required" });
  const same = existing?.type === type;
  const d = input.detail ?? {};
  const keep = (field: "occurred_us" | "start_us" | "end_us") =>
    same && input.detail === undefined ? existing![field] : null;
  let occurred: number | null = null;
  let start: number | null = null;
  let end: number | null = null;
  if (type === "point") {
    occurred = d.occurred_elapsed_time ?? keep("occurred_us");
    if (occurred === null)
      throw new Invalid("invalid body: detail.occurred_elapsed_time: required for a point marker", {
        "detail.occurred_elapsed_time": "required",
      });
  } else {
    start = d.start_elapsed_time ?? keep("start_us");
    end = d.end_elapsed_time ?? keep("end_us");
    if (start === null || end === null)
      throw new Invalid(
        "invalid body: detail.start_elapsed_time and detail.end_elapsed_time: required for a range marker",
        { detail: "start_elapsed_time and end_elapsed_time required" },
      );
    if (end < start)
      throw new Invalid("invalid body: detail.end_elapsed_time: before start_elapsed_time", {
        "detail.end_elapsed_time": "before start_elapsed_time",
      });
  }
  return {
    type,
    name: input.name ?? existing?.name ?? "",
    description: input.description ?? existing?.description ?? "",
    tag: input.tag !== undefined ? JSON.stringify(input.tag) : (existing?.tag ?? "{}"),
    occurred_us: occurred,
    start_us: start,
    end_us: end,
  };
}

export interface ProjectMarkerFilter {
  uuids?: readonly string[];
  names?: readonly string[];
  startUs?: number;
  endUs?: number;
  /** `tag.<key>=<value>`: any of them (a value matches when the tag's value contains it). */
  anyTag?: ReadonlyArray<[string, string]>;
  /** `!tag.<key>`: none of these keys; wins over anyTag. */
  noTag?: readonly string[];
  sort: "name" | "base_time" | "created_at" | "updated_at";
  desc: boolean;
}

/** A marker's absolute time (µs since the epoch): its measurement's base time plus its (start) time. */
const absoluteUs = (r: ProjectMarkerRow) =>
  r.basetime_s * 1_000_000 + Math.floor(r.basetime_nanos / 1000) + (r.occurred_us ?? r.start_us ?? 0);

export class MarkerService {
  constructor(private readonly store: MeasurementStore) {}

  private get db() {
    return this.store.db;
  }

  /** Runs fn on the marker's measurement under its lock; `measUuid` given = the marker must belong to it. */
  private async write<T>(
    project: string,
    measUuid: string | undefined,
    markerUuid: string | undefined,
    fn: (tx: Queryable, meas: string, row: MarkerRow | undefined) => Promise<T>,
  ): Promise<T> {
    let meas = measUuid?.toLowerCase();
    if (meas === undefined) meas = (await repo.findMarker(this.db, markerUuid!.toLowerCase()))?.measurement_uuid;
    if (meas === undefined) throw markerNotFound();
    const target = meas;
    const result = await this.db.transaction(async (tx) => {
      await this.store.require(tx, project, target);
      let row: MarkerRow | undefined;
      if (markerUuid !== undefined) {
        row = await repo.findMarker(tx, markerUuid.toLowerCase());
        if (!row || row.measurement_uuid !== target) throw markerNotFound();
      }
      return fn(tx, target, row);
    }, measurementLock(target));
    this.store.events.publish(target, project);
    return result;
  }

  create(project: string, measUuid: string, input: MarkerInput, by: string): Promise<MeasurementMarker> {
    if (input.type === undefined || input.detail === undefined)
      throw new Invalid("invalid body: type and detail are required", {
        ...(input.type === undefined ? { type: "required" } : {}),
        ...(input.detail === undefined ? { detail: "required" } : {}),
      });
    return this.write(project, measUuid, undefined, async (tx, meas) => {
      const now = nowIso();
      const row: MarkerRow = {
        uuid: crypto.randomUUID(),
        measurement_uuid: meas,
        ...valuesOf(input, undefined),
        created_at: now,
        created_by: by,
        updated_at: now,
        updated_by: by,
      };
      await repo.insertMarker(tx, row);
      return renderMarker(row);
    });
  }

  update(
    project: string,
    measUuid: string | undefined,
    markerUuid: string,
    input: MarkerInput,
    by: string,
  ): Promise<MeasurementMarker> {
    return this.write(project, measUuid, markerUuid, async (tx, _meas, row) => {
      await repo.updateMarker(tx, row!.uuid, valuesOf(input, row), nowIso(), by);
      return renderMarker((await repo.findMarker(tx, row!.uuid))!);
    });
  }

  async remove(project: string, measUuid: string | undefined, markerUuid: string): Promise<void> {
    await this.write(project, measUuid, markerUuid, (tx, _meas, row) => repo.deleteMarker(tx, row!.uuid));
  }

  async removeAll(project: string, measUuid: string): Promise<void> {
    await this.write(project, measUuid, undefined, (tx, meas) => repo.deleteMarkersOf(tx, meas));
  }

  async get(project: string, measUuid: string | undefined, markerUuid: string): Promise<MeasurementMarker> {
    const row = await repo.findMarker(this.db, markerUuid.toLowerCase());
    if (!row || (measUuid !== undefined && row.measurement_uuid !== measUuid.toLowerCase())) throw markerNotFound();
    // A marker of a measurement outside the project is not found either.
    await this.store
      .require(this.db, project, row.measurement_uuid)
      .catch((err: unknown) => Promise.reject(err instanceof NotFound ? markerNotFound() : err));
    return renderMarker(row);
  }

  async list(project: string, measUuid: string): Promise<{ items: MeasurementMarker[] }> {
    const m = await this.store.require(this.db, project, measUuid);
    return { items: (await repo.markersOf(this.db, m.uuid)).map(renderMarker) };
  }

  /** The markers of each measurement, for the measurement objects' `markers`. */
  async ofMeasurements(uuids: readonly string[]): Promise<Map<string, MeasurementMarker[]>> {
    const rows = await repo.markersOfMany(this.db, uuids);
    return new Map([...rows].map(([u, rs]) => [u, rs.map(renderMarker)]));
  }

  /** The project-wide list: markers are few per measurement, so the project's are filtered and sorted here. */
  async listProject(project: string, f: ProjectMarkerFilter): Promise<MeasurementMarker[]> {
    const uuids = f.uuids && new Set(f.uuids.map((u) => u.toLowerCase()));
    const names = f.names && new Set(f.names);
    const rows = (await repo.projectMarkers(this.db, project)).filter((r) => {
      if (uuids && !uuids.has(r.uuid)) return false;
      if (names && !names.has(r.name)) return false;
      const at = absoluteUs(r);
      if ((f.startUs !== undefined && at < f.startUs) || (f.endUs !== undefined && at >= f.endUs)) return false;
      const tag = JSON.parse(r.tag) as Record<string, string>;
      if (f.noTag?.some((k) => Object.hasOwn(tag, k))) return false;
      if (f.anyTag?.length && !f.anyTag.some(([k, v]) => Object.hasOwn(tag, k) && tag[k]!.includes(v))) return false;
      return true;
    });
    const key = (r: ProjectMarkerRow): string | number => (f.sort === "base_time" ? absoluteUs(r) : r[f.sort]);
    rows.sort((a, b) => {
      const x = key(a);
      const y = key(b);
      const c = x < y ? -1 : x > y ? 1 : a.uuid < b.uuid ? -1 : a.uuid > b.uuid ? 1 : 0;
      return f.desc ? -c : c;
    });
    return rows.map(renderMarker);
  }
}
