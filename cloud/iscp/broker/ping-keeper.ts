// The broker's own Pings to a client and the wait for their Pongs. A Pong the broker cannot have read, because
// it stopped reading the connection itself (storage behind, ConnIntake), is not the client's fault: the wait
// starts again once the connection is read, so a client the cloud is merely behind on is never dropped.

export interface PingTarget {
  sendPing(requestId: number): void;
  nextServerRequestId(): number;
  /** Whether the broker has stopped reading the connection, and when it last started again (ms since epoch). */
  readonly inputStopped: boolean;
  readonly inputResumedAt: number;
  pingTimedOut(): void;
}

export class PingKeeper {
  private pingTimer: NodeJS.Timeout | undefined;
  private pongTimer: NodeJS.Timeout | undefined;
  private awaitingPong: number | undefined;

  constructor(private readonly target: PingTarget) {}

  start(intervalSec: number, timeoutSec: number): void {
    const timeoutMs = timeoutSec * 1000;
    this.pingTimer = setInterval(() => {
      if (this.awaitingPong !== undefined) return;
      const id = this.target.nextServerRequestId();
      this.awaitingPong = id;
      this.target.sendPing(id);
      this.waitPong(timeoutMs);
    }, intervalSec * 1000);
  }

  private waitPong(timeoutMs: number): void {
    this.pongTimer = setTimeout(() => {
      const t = this.target;
      if (t.inputStopped || Date.now() - t.inputResumedAt < timeoutMs) return this.waitPong(timeoutMs);
      t.pingTimedOut();
    }, timeoutMs);
  }

  onPong(requestId: number): void {
    if (requestId !== this.awaitingPong) return;
    this.awaitingPong = undefined;
    clearTimeout(this.pongTimer);
  }

  stop(): void {
    clearInterval(this.pingTimer);
    clearTimeout(this.pongTimer);
  }
}
