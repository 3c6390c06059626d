// Sending one delivery: POST the JSON body to the hook's URL with `X-Intdash-Signature-256` =
// base64(HMAC-SHA256(secret, body)) (as aptpod's intdash webhook example checks it). A 2xx answer
// succeeds; anything else is retried after 1 s, 2 s, 4 s, ... up to `attempts` tries in all.
import crypto from "node:crypto";
import type { Queryable } from "../../database/db.js";
import { recordAttempt } from "../repo/deliveries.js";

export const SIGNATURE_HEADER = "X-Intdash-Signature-256";
const BODY_KEPT = 4096;
const TIMEOUT_MS = 10_000;

export const signature = (secret: string, body: string) =>
  crypto.createHmac("sha256", secret).update(body).digest("base64");

export interface DeliveryPlan {
  uuid: string;
  url: string;
  secret: string;
  body: string;
  /** Tries in all (1 = no retry). */
  attempts: number;
  backoffMs: number;
}

interface Outcome {
  ok: boolean;
  reason: string;
  status: number | null;
  headers: string | null;
  body: string | null;
}

async function attempt(p: DeliveryPlan, headers: Record<string, string>): Promise<Outcome> {
  try {
    const res = await fetch(p.url, {
      method: "POST",
      headers,
      body: p.body,
      redirect: "manual",
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    const text = (await res.text()).slice(0, BODY_KEPT);
    const ok = res.status >= 200 && res.status < 300;
    const got: Record<string, string> = {};
    res.headers.forEach((v, k) => (got[k] = v));
    return {
      ok,
      reason: ok ? "" : `the receiver answered ${res.status}`,
      status: res.status,
      headers: JSON.stringify(got),
      body: text,
    };
  } catch (err) {
    return { ok: false, reason: `no answer: ${(err as Error).message}`, status: null, headers: null, body: null };
  }
}

/** Waits, or resolves false at once when the service stops. */
function pause(ms: number, stop: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (stop.aborted) return resolve(false);
    const t = setTimeout(() => resolve(true), ms);
    stop.addEventListener("abort", () => (clearTimeout(t), resolve(false)), { once: true });
  });
}

/** Runs the tries, recording each; resolves once the delivery succeeded or gave up (or the service stopped). */
export async function deliver(db: Queryable, p: DeliveryPlan, stop: AbortSignal): Promise<boolean> {
  const headers = {
    "Content-Type": "application/json",
    "User-Agent": "cloud-peer-webhook",
    [SIGNATURE_HEADER]: signature(p.secret, p.body),
  };
  const shown = JSON.stringify({
    "Content-Type": headers["Content-Type"],
    "User-Agent": headers["User-Agent"],
    [SIGNATURE_HEADER]: headers[SIGNATURE_HEADER],
  });
  for (let n = 1; ; n++) {
    const o = await attempt(p, headers);
    const last = o.ok || n >= p.attempts;
    await recordAttempt(db, p.uuid, {
      status: o.ok ? "succeeded" : last ? "failed" : "processing",
      reason: o.reason,
      attempts: n,
      request_headers: shown,
      response_status: o.status,
      response_headers: o.headers,
      response_body: o.body,
      finished_at: last ? new Date().toISOString() : null,
    });
    if (last) return o.ok;
    if (!(await pause(p.backoffMs * 2 ** (n - 1), stop))) return false;
  }
}
