// Measurement events for webhooks. The measurements area publishes only "this measurement changed";
// the action is found by reading the measurement and comparing with what was seen before: gone =
// deleted, first seen within a minute of its creation = created, newly ended = ended, newly completed
// = completed, a changed name, description or base time = updated. Data arriving changes none of these,
// so a streaming measurement does not flood its hooks.
import { NotFound } from "../../errors.js";
import type { Services } from "../../services.js";

interface Seen {
  ended: boolean;
  completed: boolean;
  fingerprint: string;
}

const CREATED_WITHIN_MS = 60_000;
const MAX_SEEN = 100_000;

/**
 * Listens to the measurements' events only while some enabled hook wants them (so an idle peer adds
 * no listener); call the returned function whenever the hooks change, and with false at shutdown.
 */
export function watchMeasurements(svc: Pick<Services, "log" | "measurements" | "webhooks">): (active: boolean) => void {
  const seen = new Map<string, Seen>();
  /** Measurements already told as deleted: a late change event of theirs must not tell it twice. */
  const gone = new Set<string>();
  const queues = new Map<string, Promise<void>>();

  async function examine(meas: string, project: string): Promise<void> {
    const fields = { measurement_uuid: meas };
    const before = seen.get(meas);
    let m;
    try {
      m = await svc.measurements.measurements.get(project, meas);
    } catch (err) {
      if (!(err instanceof NotFound)) throw err;
      seen.delete(meas);
      if (gone.has(meas)) return;
      if (gone.size >= MAX_SEEN) gone.clear();
      gone.add(meas);
      svc.webhooks.dispatch(project, {
        resource_type: "measurement",
        action: "deleted",
        fields,
        kind: "measurements_event",
      });
      return;
    }
    const now: Seen = {
      ended: m.ended,
      completed: m.completed,
      fingerprint: JSON.stringify([m.name, m.description, m.basetime, m.basetime_type]),
    };
    if (seen.size >= MAX_SEEN) seen.clear();
    seen.set(meas, now);
    const actions: string[] = [];
    if (!before) {
      if (Date.now() - Date.parse(m.created_at) < CREATED_WITHIN_MS) actions.push("created");
    } else if (now.fingerprint !== before.fingerprint) actions.push("updated");
    if (now.ended && !before?.ended) actions.push("ended");
    if (now.completed && !before?.completed) actions.push("completed");
    for (const action of actions)
      svc.webhooks.dispatch(project, { resource_type: "measurement", action, fields, kind: "measurements_event" });
  }

  let unsubscribe: (() => void) | undefined;
  const listener = (e: { measUuid: string; projectUuid: string }) => {
    if (!svc.webhooks.wants(e.projectUuid, "measurements_event")) return;
    // One examination at a time per measurement, in event order.
    const next = (queues.get(e.measUuid) ?? Promise.resolve())
      .then(() => examine(e.measUuid, e.projectUuid))
      .catch((err) =>
        svc.log.warn({ err: String(err), measurement: e.measUuid }, "webhook: measurement event not examined"),
      );
    queues.set(e.measUuid, next);
    void next.then(() => queues.get(e.measUuid) === next && queues.delete(e.measUuid));
  };
  return (active) => {
    if (active && !unsubscribe) unsubscribe = svc.measurements.events.subscribe(listener);
    if (!active && unsubscribe) unsubscribe(), (unsubscribe = undefined);
  };
}
