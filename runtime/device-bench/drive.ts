// The timeline every benchmark case shares, whatever carries the points: wait for the first point to get
// through, let the connector write for the case's duration (or its count), then wait until the receiving
// side has stored every point it sent, printing progress on the way.
import { sleep, type Connector, type ConnectorReport } from "./children.js";
import { monoNs } from "./latency.js";

export interface Progress {
  stored: number;
  sent?: number;
  elapsedS: number;
  /** Points/s stored over the last interval. */
  rate: number;
}

export interface DriveOptions {
  connector: Connector;
  /** 0: the connector writes as fast as it can and is stopped after durationS; otherwise it stops at its count. */
  rate: number;
  durationS: number;
  /** How long to wait for the rest once the connector stopped. */
  drainMs: number;
  pollMs: number;
  /** Points stored so far (the receiving side's count). */
  stored(report: ConnectorReport | undefined): Promise<number>;
  /** True once the first point came through (the run's figures start then: not the processes' start-up). */
  flowing(): Promise<boolean>;
  /** Called once the first point came through (start CPU watches). */
  onFlowing?(): void;
  onPoll?(now: number, stored: number): void;
  /** Called once when nothing more arrived for 3 s after the connector stopped (and not all points are there). */
  onStall?(): Promise<void>;
  onProgress?(p: Progress): void;
}

export interface DriveResult {
  report: ConnectorReport;
  stored: number;
  /** When the poll saw every point stored (CLOCK_MONOTONIC ns), 0 when they did not all arrive. */
  doneAt: number;
  drainMs: number;
}

export async function drive(o: DriveOptions): Promise<DriveResult> {
  let report: ConnectorReport | undefined;
  let failure: unknown;
  o.connector.report.then(
    (r) => (report = r),
    (e: unknown) => (failure = e),
  );
  for (const end = Date.now() + 60_000; !(await o.flowing()); await sleep(20)) {
    if (failure) throw failure;
    if (Date.now() > end) throw new Error("no point came through within 60 s");
  }
  o.onFlowing?.();
  const t0 = monoNs();
  let last = { t: t0, stored: 0 };
  let stored = 0;
  let stoppedAt = 0;
  let lastChange = { t: t0, stored: -1 };
  let stallHandled = false;
  for (;;) {
    const now = monoNs();
    const elapsedS = (now - t0) / 1e9;
    if (!report && o.rate === 0 && elapsedS >= o.durationS) report = await o.connector.stop(o.drainMs);
    if (failure) throw failure;
    if (report && stoppedAt === 0) stoppedAt = now;
    stored = await o.stored(report);
    o.onPoll?.(now, stored);
    if (now - last.t >= 1e9) {
      o.onProgress?.({ stored, sent: report?.sent, elapsedS, rate: ((stored - last.stored) * 1e9) / (now - last.t) });
      last = { t: now, stored };
    }
    if (report && stored >= report.sent) return { report, stored, doneAt: now, drainMs: o.drainMs };
    if (stored !== lastChange.stored) lastChange = { t: now, stored };
    else if (stoppedAt && !stallHandled && o.onStall && now - Math.max(lastChange.t, stoppedAt) > 3e9) {
      stallHandled = true;
      await o.onStall();
    }
    if (stoppedAt && now - stoppedAt > o.drainMs * 1e6)
      return { report: report!, stored, doneAt: 0, drainMs: o.drainMs };
    await sleep(o.pollMs);
  }
}
