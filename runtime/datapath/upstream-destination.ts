// Where the points routed to one upstream id go during a measurement (UpstreamDestination), and how its iSCP
// stream is opened. Two kinds:
//   persist: true  -> persistent-upstream.ts: stored in LMDB, sent in real time by realtime-sender.ts.
//   persist: false -> volatile-upstream.ts: straight to the iSCP upstream's buffer.
import type { IscpClient } from "../iscp/conn.js";
import type { ClientUpstream } from "../iscp/upstream.js";
import { QoS } from "../../proto/wire/message.js";
import type { DataPoint } from "../datapoint.js";
import type { UpstreamSettings } from "../settings/schemas.js";

/** Base-time metadata priority for the system clock (edge_rtc), as the former agent sends it. */
const EDGE_RTC_PRIORITY = 20;

export interface MeasurementRef {
  uuid: string;
  baseTimeNs: bigint;
}

export interface StreamLink {
  client: IscpClient;
  /** Bytes sent, for the stream's bitrate. */
  data(bytes: number): void;
}

export interface UpstreamDestination {
  readonly settings: UpstreamSettings;
  push(points: readonly DataPoint[]): Promise<void> | void;
  /** A stream connection is up: open the iSCP upstream on it. */
  attach(link: StreamLink): Promise<void>;
  /** The connection is gone. */
  detach(): Promise<void>;
  /** The measurement ends: flush, wait (bounded) for acks, close the stream and the sequence. */
  finish(): Promise<void>;
  /** Real time has stored chunks it has not sent or had acknowledged. */
  busy(): boolean;
  /** Deferred upload with priority higher_than_realtime holds real time back. */
  setHold(hold: boolean): void;
  readonly counters: { sentChunks: number; droppedPoints: number };
}

const qosOf = (q: UpstreamSettings["qos"]) => (q === "partial" ? QoS.PARTIAL : QoS.UNRELIABLE);

export async function openStream(
  link: StreamLink,
  meas: MeasurementRef,
  s: UpstreamSettings,
  flushIntervalMs?: number,
): Promise<ClientUpstream> {
  // UNRELIABLE: a chunk unacked for 2 s is taken as lost (acks follow the cloud's storage commit, well within it).
  const up = await link.client.openUpstream({
    sessionId: meas.uuid,
    qos: qosOf(s.qos),
    persist: s.persist,
    flushIntervalMs,
    expiryIntervalSec: 30,
    lostAfterMs: 2000,
  });
  await link.client.sendBaseTime(
    { sessionId: meas.uuid, name: "edge_rtc", priority: EDGE_RTC_PRIORITY, elapsedTime: 0n, baseTime: meas.baseTimeNs },
    s.persist,
  );
  return up;
}
