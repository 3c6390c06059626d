// Downstream IPC: writes frames into a FIFO a device connector reads. Never blocks the agent:
// the FIFO is opened O_WRONLY|O_NONBLOCK (ENXIO while no connector has it open: retried on a timer),
// writes go through libuv, and everything not yet in the pipe is bounded by maxBufferedBytes; points
// beyond the bound are dropped and counted, as are frames lost when the connector goes away mid-write.
import { close, constants, open } from "node:fs";
import net from "node:net";
import { promisify } from "node:util";
import type { DataPoint } from "../datapoint.js";
import type { FrameEncoder } from "./codec.js";
import { ensureFifo } from "./fifo.js";
import { createEncoder } from "./formats.js";
import type { IpcFormat } from "./schema.js";

const openFd = promisify(open);

export interface FifoWriterOptions {
  path: string;
  format: IpcFormat;
  /** Only points whose name starts with this are written, with it removed (IPC `data_name_prefix`). */
  namePrefix?: string;
  /** Bound of bytes waiting for the connector (queued here plus in the socket). Default 4 MiB. */
  maxBufferedBytes?: number;
  /** Interval of open attempts while no connector reads the FIFO. Default 200 ms. */
  retryMs?: number;
  /** A connector opened the FIFO for reading. */
  onConnect?: () => void;
  /** The connector went away (noticed on the next write). */
  onDisconnect?: (reason: string) => void;
  /** Bytes handed to the pipe. */
  onWritten?: (bytes: number) => void;
}

export interface FifoWriterStats {
  /** Frames handed to the pipe. */
  written: number;
  /** Frames dropped: buffer full, or lost when the connector closed the FIFO. */
  dropped: number;
  /** Points with no representation in the format. */
  unsupported: number;
  /** A connector has the FIFO open for reading. */
  connected: boolean;
  bufferedBytes: number;
  /** Frames accepted but neither written nor dropped yet: accepted = written + dropped + pendingFrames. */
  pendingFrames: number;
  lastError: string;
}

interface Pending {
  buffer: Buffer;
  frames: number;
}

export class FifoWriter {
  private readonly encoder: FrameEncoder;
  private readonly max: number;
  private socket: net.Socket | undefined;
  private queue: Pending[] = [];
  private queuedBytes = 0;
  /** Frames queued here or handed to the socket without a write callback yet. */
  private pending = 0;
  /** Only stop() sets it: points written before start() completes are queued (bounded), not dropped. */
  private stopped = false;
  private generation = 0;
  private retry: NodeJS.Timeout | undefined;
  private readonly s: FifoWriterStats = {
    written: 0,
    dropped: 0,
    unsupported: 0,
    connected: false,
    bufferedBytes: 0,
    pendingFrames: 0,
    lastError: "",
  };

  constructor(private readonly opts: FifoWriterOptions) {
    this.encoder = createEncoder(opts.format);
    this.max = opts.maxBufferedBytes ?? 4 * 1024 * 1024;
  }

  get stats(): FifoWriterStats {
    return {
      ...this.s,
      connected: this.socket !== undefined,
      bufferedBytes: this.buffered(),
      pendingFrames: this.pending,
    };
  }

  async start(): Promise<void> {
    const gen = ++this.generation;
    await ensureFifo(this.opts.path);
    if (gen !== this.generation) return; // stop() was called meanwhile
    this.stopped = false;
    await this.tryOpen();
  }

  async stop(): Promise<void> {
    this.generation++;
    this.stopped = true;
    clearTimeout(this.retry);
    const queuedFrames = this.queue.reduce((n, p) => n + p.frames, 0);
    this.s.dropped += queuedFrames;
    this.pending -= queuedFrames;
    this.queue = [];
    this.queuedBytes = 0;
    const sock = this.socket;
    this.socket = undefined;
    if (sock !== undefined && !sock.destroyed) {
      // Let what is already in the socket reach the pipe (bounded wait), then close.
      await new Promise<void>((resolve) => {
        const t = setTimeout(() => sock.destroy(), 500);
        sock.once("close", () => {
          clearTimeout(t);
          resolve();
        });
        sock.end();
      });
    }
  }

  /** Encodes and queues points; returns how many frames were accepted (the rest were dropped or skipped). */
  write(points: readonly DataPoint[]): number {
    const { buffer, frames, unsupported } = this.encoder.encode(points, this.opts.namePrefix ?? "");
    this.s.unsupported += unsupported;
    if (frames === 0) return 0;
    if (this.stopped || this.buffered() + buffer.length > this.max) {
      this.s.dropped += frames;
      return 0;
    }
    const sock = this.socket;
    this.pending += frames;
    if (sock !== undefined && this.queue.length === 0) this.send(sock, { buffer, frames });
    else {
      this.queue.push({ buffer, frames });
      this.queuedBytes += buffer.length;
    }
    return frames;
  }

  private buffered(): number {
    return this.queuedBytes + (this.socket?.writableLength ?? 0);
  }

  private send(sock: net.Socket, p: Pending): void {
    sock.write(p.buffer, (err) => {
      this.pending -= p.frames;
      if (err) this.s.dropped += p.frames;
      else {
        this.s.written += p.frames;
        this.opts.onWritten?.(p.buffer.length);
      }
    });
  }

  private async tryOpen(): Promise<void> {
    if (this.stopped) return;
    let fd: number;
    try {
      fd = await openFd(this.opts.path, constants.O_WRONLY | constants.O_NONBLOCK);
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      if (err.code !== "ENXIO") this.s.lastError = err.message; // ENXIO: no reader yet, the normal wait
      this.retry = setTimeout(() => void this.tryOpen(), this.opts.retryMs ?? 200);
      return;
    }
    if (this.stopped) {
      close(fd, () => {});
      return;
    }
    const sock = new net.Socket({ fd, readable: false, writable: true });
    this.socket = sock;
    let reason = "device connector closed the FIFO";
    sock.on("error", (e: NodeJS.ErrnoException) => {
      if (e.code !== "EPIPE") reason = this.s.lastError = e.message;
    });
    sock.on("close", () => {
      if (this.socket === sock) this.socket = undefined;
      if (!this.stopped) this.opts.onDisconnect?.(reason);
      if (!this.stopped) this.retry = setTimeout(() => void this.tryOpen(), this.opts.retryMs ?? 200);
    });
    this.opts.onConnect?.();
    const queued = this.queue;
    this.queue = [];
    this.queuedBytes = 0;
    for (const p of queued) this.send(sock, p);
  }
}
