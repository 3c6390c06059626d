// What a broker connection sends of its own accord: the acks due now (streams with ack_interval 0), written
// once per turn of the event loop with the transport corked, so a turn's acks leave in one socket write per
// connection; and the relay data its downstreams queued, pulled at once while the transport has room. Relayed
// chunks are not held for the turn: a corked write counts as unsent until all of it is written, so the
// transport looked full for longer and a reader's queue overflowed where it did not before.
import { QoS } from "../../../proto/wire/message.js";
import type { MessageTransport } from "../../../proto/transport/message-transport.js";
import type { DownstreamStream } from "./downstream.js";
import type { UpstreamStream } from "./upstream.js";

/** What the output needs of its connection. */
export interface OutputConn {
  readonly transport: MessageTransport;
  readonly isOpen: boolean;
  readonly downstreams: ReadonlyMap<number, DownstreamStream>;
  /** A connection stops pulling relay data while its transport holds more than this. */
  readonly highWaterBytes: number;
}

export class ConnOutput {
  private acksDue: UpstreamStream[] = [];
  private pumpWanted = false;
  private scheduled = false;
  private rr = 0;

  constructor(private readonly conn: OutputConn) {}

  /** A stream's ack is due now: it goes out in this turn's write. */
  ackSoon(u: UpstreamStream): void {
    this.acksDue.push(u);
    this.schedule();
  }

  /** Relay data was queued, or the transport drained: pulled now when the transport has room, else next turn. */
  wake(): void {
    if (!this.conn.isOpen) return;
    if (this.conn.transport.bufferedBytes() < this.conn.highWaterBytes) return this.pump();
    this.pumpWanted = true;
    this.schedule();
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.run());
  }

  private run(): void {
    this.scheduled = false;
    const due = this.acksDue;
    this.acksDue = [];
    // A stream detached meanwhile keeps its results for a resume.
    if (due.length > 0) {
      const t = this.conn.transport;
      const flush = () => {
        for (const u of due) u.flushAck();
      };
      if (t.corked) t.corked(flush);
      else flush();
    }
    if (this.pumpWanted && this.conn.isOpen) {
      this.pumpWanted = false;
      this.pump();
    }
  }

  /** Moves queued relay chunks to the transport, round-robin over downstreams, while it has room. */
  private pump(): void {
    const t = this.conn.transport;
    const hw = this.conn.highWaterBytes;
    let progress = true;
    while (this.conn.isOpen && progress && t.bufferedBytes() < hw) {
      progress = false;
      const list = [...this.conn.downstreams.values()];
      for (let i = 0; i < list.length && t.bufferedBytes() < hw; i++) {
        const ds = list[(this.rr + i) % list.length]!;
        const frames = ds.takeFrames();
        if (!frames) continue;
        progress = true;
        // UNRELIABLE downstreams go on datagrams where the transport has them (iscp-go reads them only there).
        if (ds.qos === QoS.UNRELIABLE) for (const f of frames) t.sendUnreliable(f);
        else for (const f of frames) t.send(f);
      }
      this.rr++;
    }
  }
}
