// Measurement events for webhooks. A change that a webhook action depends on publishes the state it
// committed (cloud/measurements/service/events.ts), and a measurement's events come in the order its changes
// committed; each state is compared with the one before it: deleted = deleted, first seen within a minute of
// its creation = created, newly ended = ended, newly completed = completed, a changed name, description or
// base time = updated. So a measurement completed and deleted before the first event's turn is told both.
// An event without a state (data arriving, a marker) reads the measurement, and only where that can tell
// something: data arriving makes an upstream's measurement (created) and completes an ended one. Data
// arriving changes nothing else, so a streaming measurement does not flood its hooks.
import type { MeasurementEvent, MeasurementState } from "../../measurements/service/events.js";
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
  /** Measurements already told as deleted: a read finding one gone must not tell it twice. */
  const gone = new Set<string>();
  /** Each measurement's events in publication order; the first is being examined. */
  const queues = new Map<string, MeasurementEvent[]>();

  const tell = (project: string, meas: string, action: string) =>
    svc.webhooks.dispatch(project, {
      resource_type: "measurement",
      action,
      fields: { measurement_uuid: meas },
      kind: "measurements_event",
    });

  /** Tells what changed between the state seen before and this one. */
  function compare(project: string, meas: string, state: MeasurementState): void {
    if (state.deleted) {
      seen.delete(meas);
      if (gone.has(meas)) return;
      if (gone.size >= MAX_SEEN) gone.clear();
      gone.add(meas);
      return tell(project, meas, "deleted");
    }
    const before = seen.get(meas);
    const now: Seen = {
      ended: state.ended,
      completed: state.completed,
      fingerprint: JSON.stringify([state.name, state.description, state.basetime, state.basetime_type]),
    };
    if (seen.size >= MAX_SEEN) seen.clear();
    seen.set(meas, now);
    gone.delete(meas); // made again under the same UUID: its next deletion is told too
    const actions: string[] = [];
    if (!before) {
      if (Date.now() - Date.parse(state.created_at) < CREATED_WITHIN_MS) actions.push("created");
    } else if (now.fingerprint !== before.fingerprint) actions.push("updated");
    if (now.ended && !before?.ended) actions.push("ended");
    if (now.completed && !before?.completed) actions.push("completed");
    for (const action of actions) tell(project, meas, action);
  }

  /** Whether a later event of the measurement waits: its state (or its own read) is newer than a read now. */
  const laterWaits = (meas: string) => (queues.get(meas)?.length ?? 0) > 1;

  async function examine(e: MeasurementEvent): Promise<void> {
    await svc.webhooks.beforeMeasurementEvent(e.measUuid);
    if (e.state) return compare(e.projectUuid, e.measUuid, e.state);
    const s = seen.get(e.measUuid);
    if ((s && (s.completed || !s.ended)) || laterWaits(e.measUuid)) return;
    const state = await svc.measurements.measurements.state(e.projectUuid, e.measUuid);
    // A read may show changes whose events are still to come: compared first, they would be told twice.
    if (!laterWaits(e.measUuid)) compare(e.projectUuid, e.measUuid, state);
  }

  /** Examines a measurement's events one at a time, in order, until none waits. */
  async function drain(meas: string, queue: MeasurementEvent[]): Promise<void> {
    while (queue.length > 0) {
      await examine(queue[0]!).catch((err) =>
        svc.log.warn({ err: String(err), measurement: meas }, "webhook: measurement event not examined"),
      );
      queue.shift();
    }
    queues.delete(meas);
  }

  let unsubscribe: (() => void) | undefined;
  const listener = (e: MeasurementEvent) => {
    if (!svc.webhooks.wants(e.projectUuid, "measurements_event")) return;
    const queue = queues.get(e.measUuid);
    if (queue) return void queue.push(e);
    queues.set(e.measUuid, [e]);
    void drain(e.measUuid, queues.get(e.measUuid)!);
  };
  return (active) => {
    if (active && !unsubscribe) unsubscribe = svc.measurements.events.subscribe(listener);
    if (!active && unsubscribe) unsubscribe(), (unsubscribe = undefined);
  };
}
