// What cloud peers sharing one database tell each other: change notices (drop a cache, reload from the
// database) and iSCP relay traffic. One peer alone needs no one to tell, so its bus delivers nothing; with
// --nats the bus is NATS core publish/subscribe (at most once, ordered per publisher). A message never comes
// back to the peer that sent it: the sender has already acted on it locally.

/** Receives the subject and bytes of one message from another peer. */
export type BusHandler = (data: Uint8Array, subject: string) => void;

export interface ClusterBus {
  /** "in-process" (one peer) or "nats". */
  readonly kind: "in-process" | "nats";
  /** This process's id among the peers (random per start). */
  readonly instanceId: string;
  /** Sends to every other peer subscribed to `subject` (dot-separated tokens, NATS style). */
  publish(subject: string, data: Uint8Array): void;
  /** `subject` may end in `>` or hold `*` tokens; returns the unsubscribe. */
  subscribe(subject: string, handler: BusHandler): () => void;
  /** Asks the other peers; the first answer, or undefined when none answers within `timeoutMs`. */
  request(subject: string, data: Uint8Array, timeoutMs: number): Promise<Uint8Array | undefined>;
  /** Answers requests on `subject`; a handler returning undefined leaves the answer to another peer. */
  serve(subject: string, handler: (data: Uint8Array) => Uint8Array | undefined): () => void;
  /**
   * Called after the bus came back from an outage: notices sent meanwhile were lost, so every cache
   * registered here reloads from the database.
   */
  onResync(fn: () => void): void;
  /** "ok", or why the other peers cannot be told (readiness reports it). */
  status(): string;
  close(): Promise<void>;
}

/** One peer on its own: nothing to tell anyone, nothing to hear. */
export class InProcessBus implements ClusterBus {
  readonly kind = "in-process" as const;
  constructor(readonly instanceId: string) {}
  publish(): void {}
  subscribe(): () => void {
    return () => {};
  }
  async request(): Promise<Uint8Array | undefined> {
    return undefined;
  }
  serve(): () => void {
    return () => {};
  }
  onResync(): void {}
  status(): string {
    return "ok";
  }
  async close(): Promise<void> {}
}

/** A subject token from free text (a project or node id, a digest): NATS forbids `.`, `*`, `>` and spaces. */
export const subjectToken = (s: string): string =>
  /^[A-Za-z0-9_-]+$/.test(s) ? s : `~${Buffer.from(s).toString("base64url")}`;

const enc = new TextEncoder();
const dec = new TextDecoder();
export const jsonBytes = (v: unknown): Uint8Array => enc.encode(JSON.stringify(v));
export const bytesJson = <T>(b: Uint8Array): T => JSON.parse(dec.decode(b)) as T;
