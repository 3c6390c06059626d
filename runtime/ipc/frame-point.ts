// A data point decoded from a FIFO read. Its payload stays an offset into the read buffer until something
// asks for it: making a typed-array view per point costs more than decoding the rest of the frame, and the
// usual path (no filter reads payloads) copies the bytes straight from the read buffer into a chunk.
import type { DataPoint } from "../datapoint.js";

export class FramePoint implements DataPoint {
  name: string;
  type: string;
  /** The read buffer, and where the payload lies in it (`src` is undefined once a filter set another payload). */
  src: Uint8Array | undefined;
  payloadStart: number;
  payloadLength: number;
  elapsedNs: number;
  srcId: string;
  private view: Uint8Array | undefined;

  constructor(
    name: string,
    type: string,
    src: Uint8Array,
    payloadStart: number,
    payloadLength: number,
    elapsedNs: number,
    srcId: string,
  ) {
    this.name = name;
    this.type = type;
    this.src = src;
    this.payloadStart = payloadStart;
    this.payloadLength = payloadLength;
    this.elapsedNs = elapsedNs;
    this.srcId = srcId;
    this.view = undefined;
  }

  get payload(): Uint8Array {
    return (this.view ??= new Uint8Array(
      this.src!.buffer,
      this.src!.byteOffset + this.payloadStart,
      this.payloadLength,
    ));
  }

  set payload(p: Uint8Array) {
    this.view = p;
    this.src = undefined;
  }
}
