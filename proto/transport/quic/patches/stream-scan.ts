// After every UDP packet it receives, @matrixai/quic walks quiche's readable and writable streams
// (`processStreams`: `conn.readable()`, `conn.writable()`). In its native binding each of those lists is an
// iterator object, far dearer than a single-answer call such as `isReadable()` or `streamCapacity()`; at a few
// thousand packets a second the walk took a large share of each end's CPU. So, on a connection:
// - the walk runs once per turn of the event loop, after every datagram already there has been handed over
//   (setImmediate, like the coalesced drains), instead of once per packet;
// - the readable list is fetched only when `isReadable()` says there is one (quiche answers that from the same
//   set the list comes from);
// - the writable list is built from the streams the connection knows and may write: those with capacity, and
//   those the peer stopped (the library's write() turns that into the stream's error). The library uses the list
//   to wake writers waiting for capacity; a stream the peer opens reaches the map through the readable list, as
//   the data that opens it is readable.
// A pending walk runs before the connection's next drain, and a drain that will report that the peer closed waits a
// turn after it: data that arrived before the close (an iSCP Disconnect, say) must reach its reader first. So this
// wraps the library's own drain, and must be installed before the drains are coalesced (index.ts).
// A walk that runs once the connection has begun to stop may meet streams quiche has already dropped (the library
// then fails to shut down a stream the peer opened in the last packets); the stop ends every stream anyway, so
// such a failure is ignored. Any other failure is thrown, as the library's own walk would.
// It reaches into the library's internals (`conn`, `processStreams`, `streamMap`, `type`); should they change,
// nothing is swapped.
import { events, utils, type StreamId } from "@matrixai/quic";

interface NativeConn {
  readable(): Iterable<number>;
  writable(): Iterable<number>;
  isReadable(): boolean;
  streamCapacity(id: number): number;
  isClosed(): boolean;
  isDraining(): boolean;
  peerError(): unknown;
}

interface LibConnection {
  conn?: NativeConn;
  processStreams?: () => void;
  send?: () => Promise<void>;
  streamMap?: Map<number, unknown>;
  type?: "client" | "server";
  addEventListener?: (type: string, listener: () => void, options?: { once?: boolean }) => void;
}

const NOTHING: readonly number[] = [];

/** A bidirectional stream, or a unidirectional one this end opened. */
const mayWrite = (id: number, weAreServer: boolean): boolean =>
  !utils.isStreamUnidirectional(id as StreamId) || utils.isStreamServerInitiated(id as StreamId) === weAreServer;

export function lightenStreamScan(connection: object): boolean {
  const c = connection as LibConnection;
  const native = c.conn;
  const processStreams = c.processStreams;
  const drain = c.send;
  const streams = c.streamMap;
  if (
    !native ||
    typeof processStreams !== "function" ||
    typeof drain !== "function" ||
    !(streams instanceof Map) ||
    (c.type !== "client" && c.type !== "server")
  )
    return false;
  if (
    typeof native.isReadable !== "function" ||
    typeof native.streamCapacity !== "function" ||
    typeof c.addEventListener !== "function"
  )
    return false;
  const weAreServer = c.type === "server";
  const fullReadable = native.readable.bind(native);
  const fullWritable = native.writable.bind(native);
  let scanning = false;
  let scheduled = false;
  let stopping = false;
  c.addEventListener(events.EventQUICConnectionStop.name, () => (stopping = true), { once: true });

  const readable = (): Iterable<number> => (native.isReadable() ? fullReadable() : NOTHING);
  const writable = (): Iterable<number> => {
    const out: number[] = [];
    for (const id of streams.keys()) {
      if (!mayWrite(id, weAreServer)) continue;
      try {
        if (native.streamCapacity(id) > 0) out.push(id);
      } catch (e) {
        // The library's own test, as its write() uses.
        if (e instanceof Error && utils.isStreamStopped(e) !== false) out.push(id);
      }
    }
    return out;
  };
  // Outside processStreams (the library's stop path) the lists stay quiche's own.
  native.readable = () => (scanning ? readable() : fullReadable());
  native.writable = () => (scanning ? writable() : fullWritable());
  const walk = (): void => {
    scheduled = false;
    scanning = true;
    try {
      processStreams.call(connection);
    } catch (e) {
      if (!(stopping || native.isClosed() || native.isDraining())) throw e;
    } finally {
      scanning = false;
    }
  };
  c.processStreams = () => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(() => {
      if (scheduled) walk();
    });
  };
  c.send = function (this: unknown) {
    if (scheduled) {
      walk();
      // This drain will report that the peer closed: let what the walk handed to the streams reach their
      // readers first (a turn, so every promise along the way settles).
      if (native.peerError() != null) return new Promise<void>((r) => setImmediate(r)).then(() => drain.call(this));
    }
    return drain.call(this);
  };
  return true;
}
