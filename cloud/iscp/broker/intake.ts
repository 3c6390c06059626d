// A connection's intake while storage is behind on it. The broker keeps reading the connection, so that Pings
// and Pongs (which a client sends behind its chunks) are answered at once; everything else it reads meanwhile
// is held here in arrival order and handled once storage has caught up. Only when the held messages pass
// their byte bound does the transport stop reading (TCP's window, or QUIC's stream flow control, then holds
// the client back); while it is stopped the connection does not count its own Ping's missing Pong against the
// client (see PingKeeper), as the Pong may be waiting in the unread input.
import type { ScannedUpstreamChunk } from "../../../proto/wire/chunk-scan.js";
import type { MessageTransport } from "../../../proto/transport/message-transport.js";
import type { iscp2 } from "../../../proto/wire/message.js";

/** A message read while the intake was held: a scanned upstream chunk or any other decoded message. */
export type HeldMessage = { chunk: ScannedUpstreamChunk; msg?: undefined } | { chunk?: undefined; msg: iscp2.Message };

/** What a held message costs beyond its bytes (its object and list slot): a flood of tiny ones counts too. */
export const HELD_OVERHEAD_BYTES = 64;

export class ConnIntake {
  private held: Array<{ m: HeldMessage; bytes: number } | undefined> = [];
  private head = 0;
  heldBytes = 0;
  /** Storage is behind on this connection: messages other than Ping and Pong are held. */
  private storageBehind = false;
  /** The transport was told to stop reading because the held messages passed their bound. */
  socketPaused = false;
  /** When the transport last started reading again after a pause (ms since epoch). */
  socketResumedAt = 0;

  constructor(
    private readonly transport: MessageTransport,
    /** The held bytes past which the transport stops reading. */
    private readonly maxHeldBytes: () => number,
    private readonly handle: (m: HeldMessage) => void,
  ) {}

  /** Whether a message read now must be held (storage behind, or older messages still held: order is kept). */
  get holding(): boolean {
    return this.storageBehind || this.head < this.held.length;
  }

  get heldCount(): number {
    return this.held.length - this.head;
  }

  hold(m: HeldMessage, frameBytes: number): void {
    const bytes = frameBytes + HELD_OVERHEAD_BYTES;
    this.held.push({ m, bytes });
    this.heldBytes += bytes;
    if (this.heldBytes > this.maxHeldBytes() && !this.socketPaused && this.transport.pauseInput) {
      this.socketPaused = true;
      this.transport.pauseInput();
    }
  }

  /** Storage is behind: hold what is read from now on. */
  pause(): void {
    this.storageBehind = true;
  }

  /** Storage caught up: handle the held messages in order (until storage is behind again). */
  resume(): void {
    if (!this.storageBehind) return;
    this.storageBehind = false;
    this.drain();
  }

  private drain(): void {
    while (!this.storageBehind && this.head < this.held.length) {
      const e = this.held[this.head]!;
      this.held[this.head++] = undefined;
      this.heldBytes -= e.bytes;
      this.handle(e.m);
    }
    if (this.head === this.held.length) {
      this.held = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.held.length) {
      this.held.splice(0, this.head);
      this.head = 0;
    }
    if (this.socketPaused && this.heldBytes <= this.maxHeldBytes() >> 1) {
      this.socketPaused = false;
      this.socketResumedAt = Date.now();
      this.transport.resumeInput?.();
    }
  }

  /** The connection is gone: nothing held is handled any more. */
  clear(): void {
    this.held = [];
    this.head = 0;
    this.heldBytes = 0;
    this.storageBehind = true;
  }
}
