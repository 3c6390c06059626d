// Upstream IPC: reads frames a device connector writes into a FIFO the agent created.
// The FIFO is opened O_RDONLY|O_NONBLOCK and handed to libuv as a pipe (net.Socket), so reads are
// event driven and never hold a thread-pool thread. Until a writer appears epoll reports nothing; when the
// last writer closes we get EOF, drop any partial frame (counted) and reopen, so a connector may close and
// reopen the FIFO, or restart, as often as it likes. Reads go into one buffer the reader reuses (no
// allocation per read): the points of a read are views into it, handed over synchronously.
import { close, constants, open, openSync, readSync } from "node:fs";
import { promisify } from "node:util";
import net from "node:net";
import type { DataPoint } from "../datapoint.js";
import type { ClockBase, DecoderStats, FrameDecoder } from "./codec.js";
import { ensureFifo } from "./fifo.js";
import { createDecoder } from "./formats.js";
import type { IpcFormat } from "./schema.js";

const openFd = promisify(open);

export interface FifoReaderOptions {
  path: string;
  format: IpcFormat;
  /** IPC channel id, stamped on points as srcId. */
  srcId: string;
  namePrefix?: string;
  clockBase?: ClockBase;
  maxPayload?: number;
  /**
   * Receives the points of one read (one batch); the array is not reused, but the payloads view buffers that
   * are: consume (encode or copy) them during the call.
   */
  onPoints: (points: DataPoint[]) => void;
  onUnknownDType?: (dtype: number) => void;
  /** Bytes of each read (traffic, bitrate; the first read after an open means a connector is there). */
  onRead?: (bytes: number) => void;
  /** The last writer closed the FIFO (the reader reopens by itself). */
  onEof?: () => void;
  /** Delay before retrying a failed open. */
  retryMs?: number;
}

export interface FifoReaderStats extends DecoderStats {
  bytes: number;
  /** Times a writer closed the FIFO (EOF) and it was reopened. */
  reopens: number;
  open: boolean;
  /** Time (ms since epoch) of the last byte read, 0 if none yet. */
  lastDataAt: number;
  lastError: string;
}

export class FifoReader {
  private readonly decoder: FrameDecoder;
  private socket: net.Socket | undefined;
  private stopped = true;
  private generation = 0;
  private paused = false;
  private retry: NodeJS.Timeout | undefined;
  private bytes = 0;
  private reopens = 0;
  private lastDataAt = 0;
  private lastError = "";
  /** Every read lands here (pipes hand over at most 64 KiB per read). */
  private readonly readBuffer = Buffer.allocUnsafe(64 * 1024);

  constructor(private readonly opts: FifoReaderOptions) {
    this.decoder = createDecoder(opts.format, {
      srcId: opts.srcId,
      namePrefix: opts.namePrefix,
      clockBase: opts.clockBase,
      maxPayload: opts.maxPayload,
      onUnknownDType: opts.onUnknownDType,
    });
  }

  get stats(): FifoReaderStats {
    return {
      ...this.decoder.stats,
      bytes: this.bytes,
      reopens: this.reopens,
      open: this.socket !== undefined,
      lastDataAt: this.lastDataAt,
      lastError: this.lastError,
    };
  }

  setClockBase(base: ClockBase): void {
    this.decoder.setClockBase(base);
  }

  /** Creates the FIFO if needed and starts reading. Rejects only when the FIFO cannot be created. */
  async start(): Promise<void> {
    const gen = ++this.generation;
    await ensureFifo(this.opts.path);
    if (gen !== this.generation) return; // stop() was called meanwhile
    this.stopped = false;
    await this.openOnce();
  }

  /** Backpressure: stop reading (the connector blocks on a full pipe) until resume(). */
  pause(): void {
    this.paused = true;
    this.socket?.pause();
  }

  resume(): void {
    this.paused = false;
    this.socket?.resume();
  }

  async stop(): Promise<void> {
    this.generation++;
    this.stopped = true;
    clearTimeout(this.retry);
    const s = this.socket;
    this.socket = undefined;
    if (s !== undefined && !s.destroyed) {
      await new Promise<void>((resolve) => {
        s.once("close", () => resolve());
        s.destroy();
      });
    }
    this.decoder.end();
  }

  private async openOnce(): Promise<void> {
    if (this.stopped) return;
    let fd: number;
    try {
      fd = await openFd(this.opts.path, constants.O_RDONLY | constants.O_NONBLOCK);
    } catch (e) {
      this.lastError = (e as Error).message;
      this.retry = setTimeout(() => void this.openOnce(), this.opts.retryMs ?? 500);
      return;
    }
    if (this.stopped) close(fd, () => {});
    else this.attach(fd);
  }

  private consume(n: number): boolean {
    this.bytes += n;
    this.lastDataAt = Date.now();
    this.opts.onRead?.(n);
    const out: DataPoint[] = [];
    this.decoder.push(this.readBuffer.subarray(0, n), out);
    if (out.length > 0) this.opts.onPoints(out);
    return true;
  }

  /**
   * After an EOF event, whether the FIFO really has no writer: a read on the old descriptor returns 0 only
   * then (EAGAIN or data while one is writing). Data read here is decoded; the reads are bounded, and what a
   * busy writer adds after them comes through the next descriptor.
   */
  private writerGone(fd: number): boolean {
    for (let i = 0; i < 16; i++) {
      let n: number;
      try {
        n = readSync(fd, this.readBuffer, 0, this.readBuffer.length, null);
      } catch (e) {
        return (e as NodeJS.ErrnoException).code !== "EAGAIN";
      }
      if (n === 0) return true;
      this.consume(n);
    }
    return false;
  }

  private attach(fd: number): void {
    const onread = {
      buffer: this.readBuffer,
      callback: (n: number) => this.consume(n),
    };
    const s = new net.Socket({
      fd,
      readable: true,
      writable: false,
      allowHalfOpen: true,
      onread,
    } as net.SocketConstructorOpts);
    this.socket = s;
    if (this.paused) s.pause();
    s.on("end", () => {
      // The last writer closed. Open the next descriptor before closing this one: while no reader has
      // the FIFO open, the kernel would discard what a reconnecting connector writes.
      // libuv reports EOF on a stale POLLHUP after a partial read, even when a connector that closed and
      // reopened the FIFO meanwhile is writing again: only a real EOF ends the frame in progress.
      if (this.writerGone(fd)) this.decoder.end();
      this.socket = undefined;
      this.opts.onEof?.();
      if (!this.stopped) {
        try {
          const next = openSync(this.opts.path, constants.O_RDONLY | constants.O_NONBLOCK);
          this.reopens++;
          this.attach(next);
        } catch (e) {
          this.lastError = (e as Error).message;
          this.retry = setTimeout(() => void this.openOnce(), this.opts.retryMs ?? 500);
        }
      }
      s.destroy();
    });
    s.on("error", (e) => {
      this.lastError = e.message;
    });
  }
}
