// A ConnectRequest read and checked before the connection is open: the protocol version and ping settings
// against the broker's limits, and the token checked within the connect timeout.
import { iscp2, ResultCode } from "../../../proto/wire/message.js";
import type { Authenticate, AuthResult, IscpLimits, Logger } from "./options.js";

export const NIL_PROJECT = "00000000-0000-0000-0000-000000000000";

export interface ConnectTerms {
  pingInterval: number;
  pingTimeout: number;
  token: string;
  project: string;
  nodeId: string;
}

/** The request's terms, or why it is refused. */
export function connectTerms(
  req: iscp2.IConnectRequest,
  L: IscpLimits,
): ConnectTerms | { code: iscp2.ResultCode; why: string } {
  const major = Number((req.protocolVersion ?? "").split(".")[0]);
  if (major !== 2 && major !== 3)
    return {
      code: ResultCode.INCOMPATIBLE_VERSION,
      why: `protocol version ${req.protocolVersion ?? ""} not supported`,
    };
  const pingInterval = req.pingInterval || 10;
  const pingTimeout = req.pingTimeout || 1;
  if (pingInterval < L.minPingIntervalSec)
    return { code: ResultCode.TOO_SHORT_PING_INTERVAL, why: `ping_interval below ${L.minPingIntervalSec} s` };
  if (pingTimeout < L.minPingTimeoutSec)
    return { code: ResultCode.TOO_SHORT_PING_TIMEOUT, why: `ping_timeout below ${L.minPingTimeoutSec} s` };
  if (pingTimeout > L.maxPingTimeoutSec)
    return { code: ResultCode.TOO_LONG_PING_TIMEOUT, why: `ping_timeout above ${L.maxPingTimeoutSec} s` };
  return {
    pingInterval,
    pingTimeout,
    token: req.extensionFields?.accessToken ?? "",
    project: (req.extensionFields?.intdash?.projectUuid || NIL_PROJECT).toLowerCase(),
    nodeId: req.nodeId ?? "",
  };
}

/** The authenticator's answer, or a refusal when it throws or does not answer within `ms` (iscp-ts has no timeout). */
export async function authenticateWithin(
  authenticate: Authenticate,
  t: ConnectTerms,
  ms: number,
  logger: Logger,
  remote: string,
): Promise<AuthResult> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const late = new Promise<AuthResult>((res) => {
      timer = setTimeout(
        () => res({ ok: false, resultCode: ResultCode.CONNECT_TIMEOUT, resultString: "authentication timed out" }),
        ms,
      );
    });
    return await Promise.race([authenticate(t.token, t.project, t.nodeId), late]);
  } catch (e) {
    logger.warn({ remote, err: String(e) }, "iscp authenticate threw");
    return { ok: false, resultCode: ResultCode.AUTH_FAILED, resultString: "authentication error" };
  } finally {
    clearTimeout(timer);
  }
}
