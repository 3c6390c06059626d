// The measurement an upstream's session writes to: its session id is the measurement UUID, the measurement is
// made on first use in the connection's project and owned by the sending node (edge), and a session naming a
// measurement of another project or node is refused.
import type { Queryable } from "../../database/db.js";
import { isUuid } from "../formats/codec.js";
import { nowNs } from "../formats/time.js";
import { DEFAULT_PRIORITY, splitNs } from "../service/model.js";
import * as repo from "../repo/measurements.js";

/** The session cannot be stored (not a UUID, or a measurement of another project has that UUID). */
export class SessionRefused extends Error {}
/** The session's measurement belongs to another node (edge): iSCP NODE_ID_MISMATCH. */
export class NodeMismatch extends Error {}
/** A measurement would be created for a node id that is not a UUID (it becomes edge_uuid): iSCP NO_NODE_ID. */
export class NodeNotUuid extends Error {}

export interface SessionOwner {
  sessionId: string;
  projectUuid: string;
  nodeId: string;
}

/** Whether a measurement row may take data from this upstream; throws the refusal otherwise. */
export function checkOwner(
  m: { project_uuid: string; edge_uuid: string },
  up: { projectUuid: string; nodeId: string },
): void {
  if (m.project_uuid !== up.projectUuid)
    throw new SessionRefused("the session's measurement belongs to another project");
  if (m.edge_uuid !== up.nodeId.toLowerCase())
    throw new NodeMismatch("the session's measurement belongs to another node");
}

/** The type (and name) of a session measurement's first base time: the server's receive time. */
export const FIRST_BASETIME = "api_first_received";

/** Makes the session's measurement, with the edge as owner and the server's receive time as first base time. */
export async function createSessionMeasurement(tx: Queryable, up: SessionOwner, now: string): Promise<void> {
  if (!isUuid(up.nodeId)) throw new NodeNotUuid("a persisted session needs an edge UUID as node id");
  const uuid = up.sessionId.toLowerCase();
  await repo.insertMeasurement(tx, {
    uuid,
    project_uuid: up.projectUuid,
    name: "",
    description: "",
    edge_uuid: up.nodeId.toLowerCase(),
    protected: false,
    now,
  });
  const { s, nanos } = splitNs(nowNs());
  const type = FIRST_BASETIME;
  await repo.insertBaseTime(
    tx,
    uuid,
    { type, name: type, priority: DEFAULT_PRIORITY[type]!, s, nanos, elapsedNs: 0 },
    now,
  );
  await repo.refreshBaseTime(tx, uuid);
}

/** The session's measurement uuid, made when missing; throws the refusal of one it may not write. */
export async function ensureSessionMeasurement(tx: Queryable, up: SessionOwner, now: string): Promise<string> {
  const uuid = up.sessionId.toLowerCase();
  const m = await repo.findMeasurement(tx, uuid);
  if (m) checkOwner(m, up);
  else await createSessionMeasurement(tx, up, now);
  return uuid;
}
