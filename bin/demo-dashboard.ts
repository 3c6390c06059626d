// The demo's dashboard and units: the vehicle's run opens on a dashboard of its track, speeds, accelerations,
// values and logs, each series named and with its unit (runtime/connectors/vehicle.ts says what it sends). Put
// on every start through the public API: the dashboard is found again by name, the labels are written over.
import type { DemoState } from "./demo-setup.js";

type Api = (p: string, init?: { method?: string; json?: unknown }) => Promise<any>;

export const DEMO_DASHBOARD = "Vehicle";

const f64 = (data_id: string) => ({ data_type: "float64", data_id });
const gnss = (field?: string) => ({ data_type: "json", data_id: "gnss/position", ...(field ? { field } : {}) });

/** [series, display name, unit] */
const LABELS: Array<[{ data_type: string; data_id: string; field?: string }, string, string]> = [
  [f64("vehicle/speed"), "Speed", "km/h"],
  [f64("vehicle/engine_rpm"), "Engine speed", "1/min"],
  [f64("imu/acc_x"), "Longitudinal acceleration", "m/s²"],
  [f64("imu/acc_y"), "Lateral acceleration", "m/s²"],
  [f64("imu/acc_z"), "Vertical acceleration", "m/s²"],
  [f64("engine/coolant_temp"), "Coolant temperature", "°C"],
  [gnss("/lat"), "Latitude", "°"],
  [gnss("/lon"), "Longitude", "°"],
  [gnss("/alt"), "Altitude", "m"],
  [gnss("/heading"), "Heading", "°"],
  [{ data_type: "bytes", data_id: "can/0x1A0" }, "Engine CAN frame", ""],
  [{ data_type: "string", data_id: "log/event" }, "Events", ""],
];

const PANELS = [
  { kind: "map", title: "Track", series: [gnss()], width: 6, height: 360 },
  {
    kind: "plot",
    title: "Speed and engine",
    series: [f64("vehicle/speed"), f64("vehicle/engine_rpm")],
    width: 6,
    height: 360,
  },
  {
    kind: "plot",
    title: "Accelerations",
    series: ["x", "y", "z"].map((a) => f64(`imu/acc_${a}`)),
    width: 8,
    height: 240,
  },
  {
    kind: "table",
    title: "Values",
    series: [f64("vehicle/speed"), f64("engine/coolant_temp"), gnss("/alt"), gnss("/heading")],
    width: 4,
    height: 240,
  },
  { kind: "log", title: "Events", series: [{ data_type: "string", data_id: "log/event" }], width: 6, height: 240 },
  { kind: "log", title: "CAN", series: [{ data_type: "bytes", data_id: "can/0x1A0" }], width: 6, height: 240 },
];

export async function ensureDemoDashboard(api: Api, demo: DemoState): Promise<void> {
  const base = `/v1/projects/${demo.projectUuid}`;
  for (const [series, display_name, unit] of LABELS)
    await api(`${base}/series_labels`, {
      method: "PUT",
      json: { edge_uuid: demo.edgeUuid, ...series, display_name, unit },
    });
  const existing = (await api(`${base}/dashboards?per_page=200`)).items.find(
    (d: { name: string }) => d.name === DEMO_DASHBOARD,
  );
  const body = { name: DEMO_DASHBOARD, panels: PANELS, default_edge_uuids: [demo.edgeUuid] };
  if (existing) await api(`${base}/dashboards/${existing.uuid}`, { method: "PATCH", json: body });
  else await api(`${base}/dashboards`, { method: "POST", json: body });
}
