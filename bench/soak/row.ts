// One row of the soak: the system of a transport and a backend under the connector's steady load for the
// row's duration, faults on the schedule, then the count: what the connector sent, what the agent accepted and
// got acknowledged (its queue empty at the end), what the cloud stored, once or more.
import { sleep } from "../../runtime/device-bench/children.js";
import { monoNs } from "../../runtime/device-bench/latency.js";
import { loadAverage } from "../../runtime/device-bench/proc-stats.js";
import { LIVE_GAP_TARGET_S } from "./report.js";
import { AcceptedCounter, readBack, type StoredCounts } from "./counts.js";
import { faultCycle } from "./faults.js";
import { rowName, type RowSpec, type SoakOptions } from "./options.js";
import { startSystem, type System } from "./system.js";
import { Viewer } from "./viewer.js";
import { ProcessWatch, type Slope } from "./watch.js";

export interface FaultRecord {
  fault: string;
  at_s: number;
  /** Seconds from the fault's end until live data reached the viewer again; null: it never came back. */
  live_gap_s: number | null;
  error?: string;
}

export interface RowResult {
  row: string;
  rate: number;
  duration_s: number;
  sent: number;
  accepted: number;
  /** Accepted and no longer held by the agent (acknowledged by the cloud); null when its queue did not drain. */
  acknowledged: number | null;
  stored: StoredCounts;
  lost: number | null;
  crashes: string[];
  faults: FaultRecord[];
  slopes: Slope[];
  viewer_connects: number;
  notes: string[];
  load: { start: number[]; end: number[] };
}

const log = (msg: string) => process.stderr.write(`soak: ${msg}\n`);

export async function runRow(spec: RowSpec, o: SoakOptions, rate: number): Promise<RowResult> {
  const load = loadAverage();
  const name = rowName(spec);
  // Room for the run's data several times over (tmpfs spends memory only on what is written).
  const diskMiB = Math.max(256, Math.ceil((rate * o.durationS * 400) / 2 ** 20));
  const startedMs = Date.now();
  const sys = await startSystem(spec, rate, diskMiB, startedMs);
  // The duration counts from the load's start, not the system's start-up.
  const t0 = Date.now();
  const notes: string[] = [];
  const accepted = new AcceptedCounter();
  const watch = new ProcessWatch(sys.caches);
  const viewer = new Viewer({
    url: sys.viewer.url,
    ca: sys.tls.ca,
    projectUuid: sys.info.projectUuid,
    viewer: sys.viewer,
    sourceEdge: sys.info.edgeUuid,
  });
  viewer.start();
  const sampler = setInterval(() => {
    watch.sample(sys.pids());
    void accepted.read(sys.agent.pid, sys.agent.current?.api);
  }, o.sampleS * 1000);
  const ctx = { accepted, note: (m: string) => void notes.push(m) };
  const faults: Array<FaultRecord & { endNs?: number }> = [];
  try {
    // One fault at a time: the first after `recoverS`, each next one `recoverS` after the previous one ended,
    // while the fault and its recovery fit in the duration.
    log(
      `${name}: ${rate} points/s for ${o.durationS} s, started in ${Math.round((t0 - startedMs) / 1000)} s (load ${load.join(" ")})`,
    );
    const next = faultCycle(sys, o.faults);
    const elapsedS = () => (Date.now() - t0) / 1000;
    await sleep(o.recoverS * 1000);
    while (elapsedS() + o.holdS + o.recoverS <= o.durationS) {
      // On a run long enough for the slopes to be judged, the second half leaves the agent and the cloud running:
      // their longest life is what the slope is read from.
      const fault = next({ restarts: o.durationS < o.judgeSlopesFromS || elapsedS() < o.durationS / 2 });
      if (!fault) break;
      const rec: FaultRecord & { endNs?: number } = {
        fault: fault.name,
        at_s: Math.round(elapsedS()),
        live_gap_s: null,
      };
      faults.push(rec);
      try {
        await fault.begin(sys, ctx);
        await sleep(o.holdS * 1000);
      } catch (e) {
        rec.error = (e as Error).message;
      }
      // Ended also when it failed half-way (a paused connector, a filled disk), so the run goes on.
      try {
        await fault.end(sys, ctx);
        if (!rec.error) rec.endNs = monoNs();
      } catch (e) {
        rec.error = [rec.error, (e as Error).message].filter(Boolean).join("; ");
      }
      log(`${name}: ${Math.round(elapsedS())} s: ${fault.name} done${rec.error ? ` (${rec.error})` : ""}`);
      await sleep(o.recoverS * 1000);
    }
    await sleep(t0 + o.durationS * 1000 - Date.now());
    // A fault whose live data has not come back yet gets the target's time twice over before it counts as never.
    const lastEnd = faults.findLast((f) => f.endNs !== undefined)?.endNs;
    for (
      let i = 0;
      lastEnd !== undefined && viewer.liveGapAfter(lastEnd) === undefined && i < LIVE_GAP_TARGET_S * 8;
      i++
    )
      await sleep(250);
    for (const f of faults) {
      const g = f.endNs === undefined ? undefined : viewer.liveGapAfter(f.endNs);
      f.live_gap_s = g === undefined ? null : +(g / 1e9).toFixed(2);
      delete f.endNs;
    }
    clearInterval(sampler);
    const slopes = watch.slopes(o.warmupS);
    const count = await finish(sys, accepted, o, notes);
    const stored = await readBack({
      url: sys.info.url,
      token: sys.info.token,
      projectUuid: sys.info.projectUuid,
      edgeUuid: sys.info.edgeUuid,
      sent: count.sent,
    });
    const crashes = [...sys.clouds, sys.agent, sys.connector].flatMap((k) => k.crashes);
    return {
      row: name,
      rate,
      duration_s: o.durationS,
      sent: count.sent,
      accepted: accepted.total,
      acknowledged: count.drained ? accepted.total : null,
      stored,
      lost: count.drained ? Math.max(0, accepted.total - stored.stored) : null,
      crashes,
      faults,
      slopes,
      viewer_connects: viewer.connects,
      notes,
      load: { start: load, end: loadAverage() },
    };
  } finally {
    clearInterval(sampler);
    await viewer.close();
    await sys.stop();
  }
}

/** Stops the connector, lets the agent read its FIFO to the end, ends the measurement and waits for the queue to empty. */
async function finish(
  sys: System,
  accepted: AcceptedCounter,
  o: SoakOptions,
  notes: string[],
): Promise<{ sent: number; drained: boolean }> {
  const connector = sys.connector.current!;
  await sys.connector.stop("SIGTERM", 60_000);
  const sent = (await connector.report.catch(() => undefined))?.sent ?? 0;
  const end = Date.now() + o.drainS * 1000;
  while (Date.now() < end) {
    const r = await accepted.read(sys.agent.pid, sys.agent.current?.api);
    if (r && accepted.total >= sent) break;
    await sleep(250);
  }
  // Ending the measurement sends what the cloud never acknowledged in real time by deferred upload.
  await sys
    .api()
    .request("DELETE", "/device-connectors/upstream/bench")
    .catch(() => undefined);
  let queue: number | undefined;
  while (Date.now() < end) {
    queue = (await accepted.read(sys.agent.pid, sys.agent.current?.api))?.queueChunks;
    if (queue === 0) return { sent, drained: true };
    await sleep(500);
  }
  // The wait for the FIFO's points may have taken the whole time (an agent that crashed lost what it had read).
  if (accepted.total < sent)
    notes.push(`the agent accepted ${accepted.total} of the ${sent} points the connector sent in ${o.drainS} s`);
  else
    notes.push(
      `the agent still held ${queue ?? "an unknown number of"} chunks ${o.drainS} s after the connector stopped`,
    );
  return { sent, drained: false };
}
