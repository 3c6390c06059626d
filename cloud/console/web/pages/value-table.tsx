// A dashboard's table of values: each series' value at the shared cursor (the latest while nothing is pointed
// at), and its least and greatest value in the window, with its unit.
import { ErrorNote } from "../common";
import { useLoad } from "../hooks";
import { plotKey, type Plottable } from "./json-fields";
import type { SharedTime } from "./plot-panel";
import { bucketMiddles, fetchReduced } from "./reduced";
import { nameOf, unitOf, type Labels } from "./series-labels";

const BUCKETS = 400;
const fmt = (v: number | undefined) =>
  v === undefined ? "—" : v.toLocaleString(undefined, { maximumSignificantDigits: 6 });

/** The value of the last bucket at or before `t` (the first when `t` is before them all). */
function valueAt(times: number[], values: number[], t: number): number | undefined {
  let at = 0;
  for (let i = 0; i < times.length && times[i]! <= t; i++) at = i;
  return values[at];
}

export function ValueTable({
  project,
  uuid,
  series,
  labels,
  time,
}: {
  project: string;
  uuid: string;
  series: Plottable[];
  labels?: Labels;
  time: SharedTime;
}) {
  const rows = useLoad(
    () =>
      Promise.all(
        series.map(async (d) => {
          const r = await fetchReduced(project, uuid, d, BUCKETS, time.window);
          return { ...bucketMiddles(r), min: Math.min(...r.buckets.min), max: Math.max(...r.buckets.max) };
        }),
      ),
    [series.map(plotKey).join("|"), project, uuid, time.window?.[0], time.window?.[1], time.refresh],
  );
  return (
    <>
      <ErrorNote error={rows.error} />
      {series.length === 0 && <p class="hint">Choose the series to show.</p>}
      <table class="list" aria-label={`Values of ${series.map((s) => nameOf(s, labels)).join(", ")}`}>
        <thead>
          <tr>
            <th scope="col">Series</th>
            <th scope="col" class="num">
              {time.cursor === undefined ? "Latest" : "At the cursor"}
            </th>
            <th scope="col" class="num">
              Min
            </th>
            <th scope="col" class="num">
              Max
            </th>
            <th scope="col">Unit</th>
          </tr>
        </thead>
        <tbody>
          {series.map((s, i) => {
            const r = rows.data?.[i];
            const now = r && (time.cursor === undefined ? r.values.at(-1) : valueAt(r.times, r.values, time.cursor));
            return (
              <tr key={plotKey(s)}>
                <td>{nameOf(s, labels)}</td>
                <td class="num" data-testid="value">
                  {fmt(now)}
                </td>
                <td class="num">{fmt(r?.values.length ? r.min : undefined)}</td>
                <td class="num">{fmt(r?.values.length ? r.max : undefined)}</td>
                <td>{unitOf(s, labels)}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </>
  );
}
