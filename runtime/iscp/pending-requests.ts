// Request/response matching of our iSCP client: our request ids are even (odd ones are the broker's), each
// outstanding request and E2E call has its timer, and all of them fail at once when the transport is lost.

export type ResponseKind =
  | "connectResponse"
  | "upstreamOpenResponse"
  | "upstreamResumeResponse"
  | "upstreamCloseResponse"
  | "upstreamMetadataAck"
  | "downstreamOpenResponse"
  | "downstreamResumeResponse"
  | "downstreamCloseResponse"
  | "pong";

interface Waiter<T> {
  resolve(v: T): void;
  reject(e: Error): void;
  timer: NodeJS.Timeout;
}

export class PendingRequests {
  private nextRequestId = 0;
  private readonly requests = new Map<number, Waiter<Record<string, unknown>> & { kind: ResponseKind }>();
  private readonly calls = new Map<string, Waiter<void>>();

  /** The next request id of ours: even, wrapping at 2^32. */
  nextId(): number {
    const id = this.nextRequestId;
    this.nextRequestId = (id + 2) >>> 0;
    return id;
  }

  /** Waits for the `kind` response to `requestId`, registered before `send` runs so no answer can come first. */
  request(
    requestId: number,
    kind: ResponseKind,
    timeoutMs: number,
    send: () => void,
  ): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.requests.delete(requestId);
        reject(new Error(`iscp ${kind} timed out`));
      }, timeoutMs);
      this.requests.set(requestId, { kind, resolve, reject, timer });
      send();
    });
  }

  /** Waits for the pong to a ping; without one in time, `timedOut` runs. */
  ping(requestId: number, timeoutMs: number, timedOut: () => void): void {
    const timer = setTimeout(() => {
      this.requests.delete(requestId);
      timedOut();
    }, timeoutMs);
    this.requests.set(requestId, { kind: "pong", resolve: () => {}, reject: () => {}, timer });
  }

  /** Hands a response to its waiter; false when nobody waits for this id and kind (not an answer to us). */
  settle(requestId: number, kind: string, body: Record<string, unknown>): boolean {
    const p = this.requests.get(requestId);
    if (!p || p.kind !== kind) return false;
    this.requests.delete(requestId);
    clearTimeout(p.timer);
    p.resolve(body);
    return true;
  }

  /** Waits for the broker's ack of the E2E call `callId`, registered before `send` runs. */
  call(callId: string, timeoutMs: number, send: () => void): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.calls.delete(callId);
        reject(new Error("iscp call timed out"));
      }, timeoutMs);
      this.calls.set(callId, { resolve, reject, timer });
      send();
    });
  }

  /** Ends the wait for a call's ack: resolved, or rejected with `error`. */
  settleCall(callId: string, error?: Error): void {
    const p = this.calls.get(callId);
    if (!p) return;
    this.calls.delete(callId);
    clearTimeout(p.timer);
    if (error) p.reject(error);
    else p.resolve();
  }

  /** Fails every outstanding request and call with `e`. */
  failAll(e: Error): void {
    for (const p of this.requests.values()) {
      clearTimeout(p.timer);
      p.reject(e);
    }
    this.requests.clear();
    for (const p of this.calls.values()) {
      clearTimeout(p.timer);
      p.reject(e);
    }
    this.calls.clear();
  }
}
