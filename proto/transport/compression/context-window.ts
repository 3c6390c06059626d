// The context of "context takeover": what one direction carried so far, as the preset dictionary of its next
// message. iscp-go 1.1.0 on, iscp-rs and our ends keep the last 2^cwinbits bytes; iscp-go before 1.1.0 keeps the
// first 2^cwinbits bytes (Go's bytes.Buffer.Truncate keeps the front). Both are the same until the direction has
// carried more than 2^cwinbits bytes; nothing on the wire says which a client keeps.

/** Which bytes a peer keeps as the context: the last ones (the protocol as the clients now have it) or the first. */
export type ContextKind = "last" | "first";

const EMPTY = Buffer.alloc(0);

/** The last `size` bytes of what was pushed. */
export class History {
  private bytes: Buffer = EMPTY;
  constructor(readonly size: number) {}

  get dictionary(): Buffer {
    return this.bytes;
  }

  push(msg: Uint8Array): void {
    if (msg.length >= this.size) {
      this.bytes = Buffer.from(msg.subarray(msg.length - this.size));
      return;
    }
    const keep = Math.min(this.bytes.length, this.size - msg.length);
    this.bytes = Buffer.concat([this.bytes.subarray(this.bytes.length - keep), msg]);
  }
}

/**
 * One direction's context of a 2^cwinbits window, kept both ways when `both` (the broker, which may serve either
 * kind of client); `cap` bounds the dictionary (DEFLATE reaches 32 KiB back at most).
 */
export class DirectionContext {
  private readonly last: History;
  /** The last `cap` bytes of the window's first bytes. */
  private readonly first: History | undefined;
  private total = 0;

  constructor(
    private readonly window: number,
    cap: number,
    both: boolean,
  ) {
    this.last = new History(Math.min(window, cap));
    this.first = both ? new History(Math.min(window, cap)) : undefined;
  }

  /** Whether the two kinds of context differ now (the direction carried more than the window). */
  get diverged(): boolean {
    return this.first !== undefined && this.total > this.window;
  }

  dictionary(kind: ContextKind): Buffer {
    return kind === "first" && this.first ? this.first.dictionary : this.last.dictionary;
  }

  push(msg: Uint8Array): void {
    this.last.push(msg);
    if (this.first && this.total < this.window) this.first.push(msg.subarray(0, this.window - this.total));
    this.total += msg.length;
  }
}
