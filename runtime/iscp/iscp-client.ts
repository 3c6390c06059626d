// Our iSCP v2 client connection: handshake, request/response matching (even request ids),
// ping/pong, E2E calls, and reconnect + resume of every open stream after a lost transport.
import { randomUUID } from "node:crypto";
import {
  decodeMessage,
  encodeMessage,
  iscp2,
  ResultCode,
  resultCodeName,
  type Message,
} from "../../proto/wire/message.js";
import type { MessageTransport } from "../../proto/transport/message-transport.js";
import { ClientDownstream, type DownstreamOptions } from "./downstream.js";
import { PendingRequests, type ResponseKind } from "./pending-requests.js";
import { resumeStreams } from "./resume-streams.js";
import { ClientUpstream, type UpstreamOptions } from "./upstream.js";
import { IscpRequestError } from "./request-error.js";
import { toLong } from "../../proto/wire/long.js";

export interface IscpClientOptions {
  /** Opens a new transport (first connect and every reconnect). */
  transport: () => Promise<MessageTransport>;
  token?: string | (() => string | Promise<string>);
  nodeId?: string;
  projectUuid?: string;
  pingIntervalSec?: number;
  pingTimeoutSec?: number;
  requestTimeoutMs?: number;
  /** Reconnect with jittered exponential backoff after the transport is lost (default on). */
  reconnect?: boolean;
  reconnectBaseMs?: number;
  reconnectMaxMs?: number;
}

const tokenOf = (o: IscpClientOptions) => (typeof o.token === "function" ? o.token() : (o.token ?? ""));

export interface IncomingCall {
  callId: string;
  requestCallId: string;
  sourceNodeId: string;
  name: string;
  type: string;
  payload: Uint8Array;
}

export type ConnState = "connecting" | "open" | "reconnecting" | "closed";

export class IscpClient {
  state: ConnState = "connecting";
  private t!: MessageTransport;
  private readonly pending = new PendingRequests();
  private readonly upstreams = new Map<number, ClientUpstream>();
  private readonly downstreams = new Map<number, ClientDownstream>();
  private nextDownAlias = 1;
  private pingTimer: NodeJS.Timeout | undefined;
  private readonly callHandlers: ((c: IncomingCall) => void)[] = [];
  private readonly stateHandlers: ((s: ConnState, why?: string) => void)[] = [];
  reconnects = 0;

  private constructor(private readonly opts: IscpClientOptions) {}

  static async connect(opts: IscpClientOptions): Promise<IscpClient> {
    const c = new IscpClient(opts);
    await c.establish(await tokenOf(opts));
    c.setState("open");
    return c;
  }

  get nodeId(): string {
    return this.opts.nodeId ?? "";
  }

  get transport(): MessageTransport {
    return this.t;
  }

  onCall(cb: (c: IncomingCall) => void): void {
    this.callHandlers.push(cb);
  }

  onStateChange(cb: (s: ConnState, why?: string) => void): void {
    this.stateHandlers.push(cb);
  }

  /**
   * Sends a message on the current transport (dropped while reconnecting); `unreliable` puts it on
   * the transport's unreliable path (QUIC datagrams), where it may be lost.
   */
  send(msg: Message, unreliable = false): boolean {
    if (this.state !== "open") return false;
    return this.sendFrame(encodeMessage(msg, this.t.encoding), unreliable);
  }

  /**
   * As send(), for a message already encoded in the transport's encoding (`transport.encoding`); `written` as
   * MessageTransport.send's. Not sent (false): `written` is not called.
   */
  sendFrame(frame: Uint8Array, unreliable = false, written?: () => void): boolean {
    if (this.state !== "open") return false;
    if (unreliable) this.t.sendUnreliable(frame, written);
    else this.t.send(frame, written);
    return true;
  }

  /** Sends a request and resolves with the matching response body; rejects on a non-zero result. */
  async request(
    build: (requestId: number) => Message,
    kind: ResponseKind,
    opts: { allowWhileConnecting?: boolean; rawResult?: boolean } = {},
  ): Promise<Record<string, unknown>> {
    if (this.state !== "open" && !opts.allowWhileConnecting) throw new Error(`iscp connection is ${this.state}`);
    const requestId = this.pending.nextId();
    const body = await this.pending.request(requestId, kind, this.opts.requestTimeoutMs ?? 10_000, () =>
      this.t.send(encodeMessage(build(requestId), this.t.encoding)),
    );
    const code = (body.resultCode as number | undefined) ?? 0;
    if (code !== ResultCode.SUCCEEDED && !opts.rawResult)
      throw new IscpRequestError(code, (body.resultString as string | undefined) ?? "");
    return body;
  }

  async openUpstream(o: UpstreamOptions): Promise<ClientUpstream> {
    const r = await this.request(
      (requestId) => ({ upstreamOpenRequest: ClientUpstream.openRequest(requestId, o) }),
      "upstreamOpenResponse",
    );
    const u = new ClientUpstream(this, o, r as iscp2.IUpstreamOpenResponse);
    this.upstreams.set(u.alias, u);
    return u;
  }

  async openDownstream(o: DownstreamOptions): Promise<ClientDownstream> {
    const alias = this.nextDownAlias++;
    const d = new ClientDownstream(this, alias, o);
    this.downstreams.set(alias, d);
    try {
      const r = await this.request(
        (requestId) => ({ downstreamOpenRequest: d.openRequest(requestId) }),
        "downstreamOpenResponse",
      );
      d.opened(r as iscp2.IDownstreamOpenResponse);
      return d;
    } catch (e) {
      this.downstreams.delete(alias);
      throw e;
    }
  }

  /** @internal streams unregister themselves on close */
  forget(s: ClientUpstream | ClientDownstream): void {
    if (s instanceof ClientUpstream) this.upstreams.delete(s.alias);
    else this.downstreams.delete(s.alias);
  }

  async sendBaseTime(
    bt: { sessionId: string; name: string; priority: number; elapsedTime: bigint; baseTime: bigint },
    persist = false,
  ): Promise<void> {
    await this.request(
      (requestId) => ({
        upstreamMetadata: {
          requestId,
          extensionFields: { persist },
          baseTime: {
            sessionId: bt.sessionId,
            name: bt.name,
            priority: bt.priority,
            elapsedTime: toLong(bt.elapsedTime, true),
            baseTime: toLong(bt.baseTime),
          },
        },
      }),
      "upstreamMetadataAck",
    );
  }

  /** E2E call; resolves with the call id once the broker acks it. */
  call(c: {
    destinationNodeId: string;
    name: string;
    type: string;
    payload: Uint8Array;
    requestCallId?: string;
  }): Promise<string> {
    if (this.state !== "open") return Promise.reject(new Error(`iscp connection is ${this.state}`));
    const callId = randomUUID();
    const acked = this.pending.call(callId, this.opts.requestTimeoutMs ?? 10_000, () =>
      this.send({
        upstreamCall: {
          callId,
          requestCallId: c.requestCallId ?? "",
          destinationNodeId: c.destinationNodeId,
          name: c.name,
          type: c.type,
          payload: c.payload,
        },
      }),
    );
    return acked.then(() => callId);
  }

  /** Closes streams, sends Disconnect and closes the transport. */
  async close(): Promise<void> {
    if (this.state === "closed") return;
    if (this.state === "open") {
      await Promise.allSettled([...this.upstreams.values()].map((u) => u.close()));
      await Promise.allSettled([...this.downstreams.values()].map((d) => d.close()));
      this.send({ disconnect: { resultCode: ResultCode.NORMAL_CLOSURE, resultString: "NORMAL_CLOSURE" } });
    }
    this.shutdown("closed by client");
    this.t?.close();
  }

  private setState(s: ConnState, why?: string): void {
    this.state = s;
    for (const h of this.stateHandlers) h(s, why);
  }

  private shutdown(why: string): void {
    this.setState("closed", why);
    clearInterval(this.pingTimer);
    this.pending.failAll(new Error(`iscp connection closed: ${why}`));
    for (const u of this.upstreams.values()) u.dispose();
    for (const d of this.downstreams.values()) d.dispose();
  }

  /** Opens a transport and runs the Connect handshake on it. */
  private async establish(token: string): Promise<void> {
    const t = await this.opts.transport();
    this.t = t;
    t.onMessage((f, unreliable) => {
      if (this.t !== t) return;
      if (unreliable) this.onDatagramMessage(f);
      else this.onFrame(f);
    });
    t.onClose((reason) => {
      if (this.t === t) this.onTransportLost(reason);
    });
    try {
      await this.request(
        (requestId) => ({
          connectRequest: {
            requestId,
            protocolVersion: "2.0.0",
            nodeId: this.opts.nodeId ?? "",
            pingInterval: this.opts.pingIntervalSec ?? 10,
            pingTimeout: this.opts.pingTimeoutSec ?? 1,
            extensionFields: {
              accessToken: token,
              intdash: { projectUuid: this.opts.projectUuid ?? "00000000-0000-0000-0000-000000000000" },
            },
          },
        }),
        "connectResponse",
        { allowWhileConnecting: true },
      );
    } catch (e) {
      t.close();
      throw e;
    }
    this.startPing();
  }

  private startPing(): void {
    clearInterval(this.pingTimer);
    const interval = (this.opts.pingIntervalSec ?? 10) * 1000;
    const timeout = (this.opts.pingTimeoutSec ?? 1) * 1000;
    this.pingTimer = setInterval(() => {
      if (this.state !== "open") return;
      const t = this.t;
      const requestId = this.pending.nextId();
      this.pending.ping(requestId, timeout, () => {
        if (this.t === t) t.terminate(); // no pong: the transport is presumed dead
      });
      t.send(encodeMessage({ ping: { requestId } }, t.encoding));
    }, interval);
  }

  /** Only DownstreamChunk comes on datagrams; a garbled or unexpected one is dropped, the connection stays. */
  private onDatagramMessage(frame: Uint8Array): void {
    let m: iscp2.Message;
    try {
      m = decodeMessage(frame, this.t.encoding);
    } catch {
      return;
    }
    if (m.message === "downstreamChunk")
      this.downstreams.get(m.downstreamChunk!.streamIdAlias ?? 0)?.receiveChunk(m.downstreamChunk!);
  }

  private onFrame(frame: Uint8Array): void {
    let m: iscp2.Message;
    try {
      m = decodeMessage(frame, this.t.encoding);
    } catch {
      this.t.terminate();
      return;
    }
    const kind = m.message!;
    const body = m[kind] as unknown as Record<string, unknown>;
    const requestId = body.requestId as number | undefined;
    // Only even ids are ours; odd ones are server-originated requests.
    if (requestId !== undefined && requestId % 2 === 0 && this.pending.settle(requestId, kind, body)) return;
    switch (kind) {
      case "ping":
        return void this.send({ pong: { requestId: m.ping!.requestId ?? 0 } });
      case "upstreamChunkAck":
        return this.upstreams.get(m.upstreamChunkAck!.streamIdAlias ?? 0)?.receiveAck(m.upstreamChunkAck!);
      case "downstreamChunk":
        return this.downstreams.get(m.downstreamChunk!.streamIdAlias ?? 0)?.receiveChunk(m.downstreamChunk!);
      case "downstreamMetadata": {
        const md = m.downstreamMetadata!;
        this.send({
          downstreamMetadataAck: { requestId: md.requestId ?? 0, resultCode: ResultCode.SUCCEEDED, resultString: "OK" },
        });
        return this.downstreams.get(md.streamIdAlias ?? 0)?.receiveMetadata(md);
      }
      case "downstreamChunkAckComplete":
        return;
      case "upstreamCallAck": {
        const a = m.upstreamCallAck!;
        const failed = (a.resultCode ?? 0) !== ResultCode.SUCCEEDED;
        this.pending.settleCall(
          a.callId ?? "",
          failed ? new IscpRequestError(a.resultCode ?? 0, a.resultString ?? "") : undefined,
        );
        return;
      }
      case "downstreamCall": {
        const c = m.downstreamCall!;
        const call: IncomingCall = {
          callId: c.callId ?? "",
          requestCallId: c.requestCallId ?? "",
          sourceNodeId: c.sourceNodeId ?? "",
          name: c.name ?? "",
          type: c.type ?? "",
          payload: c.payload ?? new Uint8Array(0),
        };
        for (const h of this.callHandlers) h(call);
        return;
      }
      case "disconnect": {
        const d = m.disconnect!;
        const why = `${d.resultString ?? ""} [${resultCodeName(d.resultCode ?? 0)}]`;
        if ((d.resultCode ?? 0) === ResultCode.PING_TIMEOUT) return this.t.terminate(); // reconnect
        this.shutdown(`broker disconnected: ${why}`);
        this.t.close();
        return;
      }
    }
  }

  private onTransportLost(reason: string): void {
    if (this.state === "closed" || this.state === "reconnecting") return;
    if (this.state === "connecting" || this.opts.reconnect === false) {
      if (this.state !== "connecting") this.shutdown(reason);
      else this.pending.failAll(new Error(`transport lost: ${reason}`));
      return;
    }
    this.setState("reconnecting", reason);
    clearInterval(this.pingTimer);
    this.pending.failAll(new Error(`transport lost: ${reason}`));
    for (const u of this.upstreams.values()) u.detached();
    void this.reconnectLoop();
  }

  private async reconnectLoop(): Promise<void> {
    const base = this.opts.reconnectBaseMs ?? 100;
    const max = this.opts.reconnectMaxMs ?? 5000;
    /** A token the broker refused (AUTH_FAILED) on this reconnect: the next try waits for another one. */
    let refused: string | undefined;
    for (let attempt = 0; this.state === "reconnecting"; attempt++) {
      const delay = Math.min(max, base * 2 ** attempt) * (0.5 + Math.random() / 2);
      await new Promise((r) => setTimeout(r, delay));
      const token = await tokenOf(this.opts);
      if (this.state !== "reconnecting") return;
      if (token === refused) continue;
      try {
        this.state = "connecting";
        await this.establish(token);
        if ((this.state as ConnState) === "closed") return this.t.close();
        this.state = "open";
      } catch (e) {
        if ((this.state as ConnState) === "closed") return;
        // A rotating token may expire while the transport is down, before its successor comes: one AUTH_FAILED
        // waits for the next token, so the streams the broker holds are resumed. Other refusals end the client.
        const tokenRefused = e instanceof IscpRequestError && e.resultCode === ResultCode.AUTH_FAILED;
        if (tokenRefused && typeof this.opts.token === "function" && refused === undefined) refused = token;
        else if (e instanceof IscpRequestError) return this.shutdown(`reconnect refused: ${e.message}`);
        this.state = "reconnecting";
        continue;
      }
      this.reconnects++;
      await resumeStreams((build, kind) => this.request(build, kind), this.upstreams, this.downstreams);
      if (this.state === "open") this.setState("open", "reconnected");
      return;
    }
  }
}
