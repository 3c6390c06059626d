// The seam between the lifecycle machines and the things they supervise (iSCP streams, FIFO channels,
// the deferred uploader). Each is an "opener": given parameters and callbacks it starts work and
// returns a handle to stop it. The machines wrap openers as callback actors, so tests inject fakes
// and the daemon injects the real iSCP client and data path.
import { fromCallback } from "xstate";
import { errorMessage } from "./vocabulary.js";

export interface Callbacks {
  /** Connected / peer present: traffic may flow. */
  opened(): void;
  /** Lost after being opened, or ended; the machine retries. */
  closed(reason: string): void;
  /** Could not open, or broke. `permanent`: retrying cannot help (e.g. a connector's restart policy gave up). */
  failed(reason: string, permanent?: boolean): void;
  /** Bytes moved, for bitrate and quiet detection. */
  data(bytes: number): void;
  /** Lost for now, and reconnecting by itself (an iSCP transport resuming its streams); opened() when back. */
  interrupted?(reason: string): void;
  /**
   * What went wrong while running (corrupt frames skipped, points refused, frames dropped), "" when
   * nothing; `severe`: data is being refused right now.
   */
  problem?(text: string, severe?: boolean): void;
}
export interface Handle {
  close(): void | Promise<void>;
}
export type Opener<P> = (params: P, cb: Callbacks) => Handle;

export type LinkEvent =
  | { type: "LINK.OPENED" }
  | { type: "LINK.CLOSED"; reason: string }
  | { type: "LINK.FAILED"; reason: string; permanent?: boolean }
  | { type: "DATA"; bytes: number }
  | { type: "LINK.INTERRUPTED"; reason: string }
  | { type: "LINK.PROBLEM"; text: string; severe?: boolean };

/**
 * Wraps an opener as an actor; callbacks after the actor stopped are ignored. `track` receives the
 * promise of each close, so a shutdown can wait for connectors and connections to end.
 */
export function openerActor<P>(open: Opener<P>, track?: (closing: Promise<unknown>) => void) {
  return fromCallback<LinkEvent, P>(({ input, sendBack }) => {
    let live = true;
    const guard = (e: LinkEvent) => live && sendBack(e);
    let handle: Handle | undefined;
    try {
      handle = open(input, {
        opened: () => guard({ type: "LINK.OPENED" }),
        closed: (reason) => guard({ type: "LINK.CLOSED", reason }),
        failed: (reason, permanent) =>
          guard(permanent ? { type: "LINK.FAILED", reason, permanent } : { type: "LINK.FAILED", reason }),
        data: (bytes) => guard({ type: "DATA", bytes }),
        interrupted: (reason) => guard({ type: "LINK.INTERRUPTED", reason }),
        problem: (text, severe) =>
          guard(severe ? { type: "LINK.PROBLEM", text, severe } : { type: "LINK.PROBLEM", text }),
      });
    } catch (e) {
      queueMicrotask(() => guard({ type: "LINK.FAILED", reason: errorMessage(e) }));
    }
    return () => {
      live = false;
      const closing = Promise.resolve()
        .then(() => handle?.close())
        .catch(() => undefined);
      track?.(closing);
    };
  });
}

/** An opener for something not wired yet: reports the reason as a failure, truthfully. */
export const unavailable =
  <P>(reason: string): Opener<P> =>
  (_p, cb) => {
    queueMicrotask(() => cb.failed(reason));
    return { close() {} };
  };
