// A connection's intake while storage is behind on it. The broker keeps reading the connection, so that Pings
// and Pongs (which a client sends behind its chunks) are answered at once; everything else it reads meanwhile
// is held here in arrival order and handled once storage has caught up. Only when the held messages pass
// their byte bound does the transport stop reading (TCP's window, or QUIC's stream flow control, then holds
// the client back); while it is stopped the connection does not count its own Ping's missing Pong against the
// client (see PingKeeper), as the Pong may be waiting in the unread input.
//
// A chunk read while held is received at once when only chunks received so far are held before it (nothing held
// ahead of it that it depends on: its stream's open or resume, its data-id aliases): counted, checked for a
// duplicate and relayed to the downstreams here and on the other instances, so live data does not wait for
// storage. Only its store, and so its ack, waits for its turn.
import type { ScannedUpstreamChunk } from "../../../proto/wire/chunk-scan.js";
import type { MessageTransport } from "../../../proto/transport/message-transport.js";
import type { iscp2 } from "../../../proto/wire/message.js";

/** What a chunk received ahead of its turn leaves for it (upstream-handlers.ts, chunkAhead). */
export interface HeldTurn {
  run(): void;
  /** The connection is gone before its turn. */
  drop(): void;
}

/** A message read while the intake was held: a scanned upstream chunk, any other decoded message, or a chunk's turn. */
export type HeldMessage =
  | { chunk: ScannedUpstreamChunk; msg?: undefined; turn?: undefined }
  | { chunk?: undefined; msg: iscp2.Message; turn?: undefined }
  | { chunk?: undefined; msg?: undefined; turn: HeldTurn };

/** What a held message costs beyond its bytes (its object and list slot): a flood of tiny ones counts too. */
export const HELD_OVERHEAD_BYTES = 64;

export class ConnIntake {
  private held: Array<{ m: HeldMessage; bytes: number } | undefined> = [];
  private head = 0;
  heldBytes = 0;
  /** Held messages to be handled in full in their turn (not chunks received ahead). */
  private whole = 0;
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
    /** Receives a chunk ahead of its turn; undefined when `m` is not a chunk that may be. */
    private readonly receiveAhead: (m: HeldMessage) => HeldTurn | undefined,
  ) {}

  /** Whether a message read now must be held (storage behind, or older messages still held: order is kept). */
  get holding(): boolean {
    return this.storageBehind || this.head < this.held.length;
  }

  get heldCount(): number {
    return this.held.length - this.head;
  }

  hold(m: HeldMessage, frameBytes: number): void {
    const turn = this.whole === 0 ? this.receiveAhead(m) : undefined;
    if (turn) m = { turn };
    else this.whole++;
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
      if (e.m.turn) e.m.turn.run();
      else {
        this.whole--;
        this.handle(e.m);
      }
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
    for (let i = this.head; i < this.held.length; i++) this.held[i]!.m.turn?.drop();
    this.whole = 0;
    this.held = [];
    this.head = 0;
    this.heldBytes = 0;
    this.storageBehind = true;
  }
}
