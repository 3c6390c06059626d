// One client connection on the broker: handshake, ping/pong, dispatch of requests, the outgoing
// relay pump, and detaching its streams (kept for resume) when the transport goes away.
// States: connecting -> authenticating -> open -> closed.
import {
  decodeMessage,
  encodeMessage,
  iscp2,
  MalformedMessageError,
  ResultCode,
  resultCodeName,
  type Message,
} from "../../../proto/wire/message.js";
import { scanUpstreamChunkMessage, type ScannedUpstreamChunk } from "../../../proto/wire/chunk-scan.js";
import { markReusable } from "../../../proto/transport/received-frames.js";
import type { MessageTransport } from "../../../proto/transport/message-transport.js";
import type { DownstreamOwner, DownstreamStream } from "./downstream.js";
import type { HubConn, IscpHub } from "./hub.js";
import type { Authenticate, Subject } from "./options.js";
import { encodeResultsAck } from "./ack-frame.js";
import { ConnOutput } from "./conn-output.js";
import { ConnIntake, type HeldMessage } from "./intake.js";
import { receiveAhead } from "./chunk-ahead.js";
import { PingKeeper } from "./ping-keeper.js";
import { chunkBody, CLIENT_ONLY, refusalFor } from "./refusals.js";
import { authenticateWithin, connectTerms, NIL_PROJECT } from "./connect-request.js";
import { RateMeter } from "./rate-meter.js";
import type { BudgetMember } from "./store-budget.js";
import type { StreamOwner, UpstreamStream } from "./upstream.js";
import * as up from "./upstream-handlers.js";
import * as down from "./downstream-handlers.js";

type State = "connecting" | "authenticating" | "open" | "closed";
/** What a kept message costs beyond its bytes (its object and list slot): a flood of tiny ones counts too. */
const BACKLOG_OVERHEAD_BYTES = 64;

export class ServerConn implements HubConn, StreamOwner, DownstreamOwner, BudgetMember {
  state: State = "connecting";
  nodeId = "";
  projectUuid = NIL_PROJECT;
  subject: Subject = { kind: "user", uuid: "" };
  private allowed: Set<string> | undefined;
  readonly upstreams = new Map<number, UpstreamStream>();
  readonly downstreams = new Map<number, DownstreamStream>();
  /** Points and payload bytes received on its upstreams lately (the edges page shows it). */
  readonly received = new RateMeter();
  /** Upstream opens past their checks and waiting for the open hook: each holds a slot of maxUpstreamsPerConn. */
  upstreamOpensPending = 0;
  private serverRequestId = 1;
  private nextUpAlias = 1;
  private backlog: Uint8Array[] = [];
  private backlogBytes = 0;
  private connectTimer: NodeJS.Timeout | undefined;
  private readonly output: ConnOutput;
  /** Cost of this connection's chunks waiting for their storage commit (hub.storeBudget), and whether past its share. */
  pendingStoreCost = 0;
  overStoreShare = false;
  /** What is read while storage is behind on this connection (Pings and Pongs are answered meanwhile). */
  private readonly intake: ConnIntake;
  private readonly ping: PingKeeper;

  constructor(
    readonly transport: MessageTransport,
    readonly hub: IscpHub,
    private readonly authenticate: Authenticate,
    readonly remote: string,
  ) {
    const intake = (this.intake = new ConnIntake(
      transport,
      () => hub.limits.maxHeldBytesPerConn,
      (m) => this.handleHeld(m),
      (m) => receiveAhead(this, m, this.allowed),
    ));
    this.output = new ConnOutput(this);
    this.ping = new PingKeeper({
      sendPing: (requestId) => this.sendMessage({ ping: { requestId } }),
      nextServerRequestId: () => this.nextServerRequestId(),
      get inputStopped() {
        return intake.socketPaused;
      },
      get inputResumedAt() {
        return intake.socketResumedAt;
      },
      pingTimedOut: () => this.disconnect(ResultCode.PING_TIMEOUT, "no pong"),
    });
  }

  get encoding() {
    return this.transport.encoding;
  }

  get isOpen(): boolean {
    return this.state === "open";
  }

  get highWaterBytes(): number {
    return this.hub.limits.transportHighWaterBytes;
  }

  /** Bytes (with a per-message overhead) of the messages kept while the ConnectRequest is authenticated. */
  get connectBacklogBytes(): number {
    return this.backlogBytes;
  }

  start(): void {
    this.transport.onMessage((f, unreliable) => (unreliable ? this.onDatagramMessage(f) : this.onFrame(f)));
    this.transport.onDrain(() => this.wake());
    this.transport.onClose((reason) => this.onClosed(reason));
    this.connectTimer = setTimeout(() => {
      if (this.state === "connecting") this.disconnect(ResultCode.CONNECT_TIMEOUT, "no ConnectRequest in time");
    }, this.hub.limits.connectTimeoutMs);
  }

  /** Odd ids for server-originated requests (Ping, DownstreamMetadata): clients only match even ids. */
  nextServerRequestId(): number {
    const id = this.serverRequestId;
    this.serverRequestId = (this.serverRequestId + 2) >>> 0 || 1;
    return id;
  }

  /** Past its share of the store budget: what is read from now on is held (Pings and Pongs still answered). */
  storeBehind(): void {
    this.intake.pause();
  }

  storeCaughtUp(): void {
    if (this.state === "open") this.intake.resume();
  }

  /** Upstreams open on this connection plus those reserved by opens still running. */
  get upstreamSlotsUsed(): number {
    return this.upstreams.size + this.upstreamOpensPending;
  }

  allocUpstreamAlias(): number {
    while (this.upstreams.has(this.nextUpAlias) || this.nextUpAlias === 0)
      this.nextUpAlias = (this.nextUpAlias + 1) >>> 0;
    return this.nextUpAlias++;
  }

  sendMessage(msg: Message): void {
    this.trySend(msg);
  }

  /** False when the message was not sent (connection closed, or above the client's frame limit). */
  trySend(msg: Message): boolean {
    if (this.state === "closed") return false;
    const frame = encodeMessage(msg, this.encoding);
    if (frame.length > this.hub.limits.maxOutgoingFrameBytes) {
      this.hub.logger.warn({ remote: this.remote, bytes: frame.length }, "iscp message above the frame limit not sent");
      return false;
    }
    this.transport.send(frame);
    return true;
  }

  deliverCall(call: iscp2.IDownstreamCall): boolean {
    return this.trySend({ downstreamCall: call });
  }

  /** Sends Disconnect and closes; streams stay resumable. */
  disconnect(code: iscp2.ResultCode, reason: string): void {
    if (this.state === "closed") return;
    this.hub.logger.info(
      { remote: this.remote, nodeId: this.nodeId, code: resultCodeName(code), reason },
      "iscp disconnect",
    );
    this.sendMessage({ disconnect: { resultCode: code, resultString: reason || resultCodeName(code) } });
    this.transport.close();
    this.onClosed(reason);
  }

  private onFrame(frame: Uint8Array): void {
    if (this.state === "closed") return;
    if (this.state === "authenticating") {
      this.backlogBytes += frame.length + BACKLOG_OVERHEAD_BYTES;
      const limit = this.hub.limits.maxConnectBacklogBytes;
      if (this.backlogBytes > limit)
        return this.disconnect(
          ResultCode.RATE_LIMIT_REACHED,
          `more than ${limit} bytes of messages before the ConnectResponse`,
        );
      this.backlog.push(frame);
      return;
    }
    if (frame.length > this.hub.limits.maxIncomingMessageBytes)
      return this.disconnect(ResultCode.TOO_LARGE_MESSAGE_SIZE, `message of ${frame.length} bytes`);
    const scanned = this.state === "open" ? this.scan(frame) : undefined;
    if (scanned) {
      // A held chunk's frame is never reused: it outlives this callback.
      if (this.intake.holding) return this.intake.hold({ chunk: scanned }, frame.length);
      markReusable(frame); // its readers hold it as long as they need (received-frames.ts)
      return this.dispatchChunk(scanned);
    }
    let m: iscp2.Message;
    try {
      m = decodeMessage(frame, this.encoding);
    } catch (e) {
      this.disconnect(
        ResultCode.MALFORMED_MESSAGE,
        e instanceof MalformedMessageError ? e.message : "undecodable message",
      );
      return;
    }
    const kind = m.message!;
    if (this.state === "connecting") {
      if (kind !== "connectRequest")
        return this.disconnect(ResultCode.PROTOCOL_ERROR, `expected connect_request, got ${kind}`);
      void this.handleConnect(m.connectRequest!);
      return;
    }
    // Pings and Pongs go ahead of held messages: a client waits for its Pong about a second.
    if (this.intake.holding && kind !== "ping" && kind !== "pong") return this.intake.hold({ msg: m }, frame.length);
    this.dispatch(kind, m);
  }

  /** A message held while storage was behind, now handled in its turn. */
  private handleHeld(m: HeldMessage): void {
    if (this.state === "open" && m.chunk) this.dispatchChunk(m.chunk);
    else if (this.state === "open" && m.msg) this.dispatch(m.msg.message!, m.msg);
  }

  /**
   * A message rebuilt from QUIC datagrams. Only UpstreamChunk travels there (iscp-go/-rs/-ts send
   * nothing else unreliably); anything else, undecodable or early input is dropped without a Disconnect,
   * as a datagram may be garbled or late.
   */
  private onDatagramMessage(frame: Uint8Array): void {
    if (this.state !== "open") return;
    const scanned = this.scan(frame);
    if (scanned) return this.dispatchChunk(scanned);
    let m: iscp2.Message;
    try {
      m = decodeMessage(frame, this.encoding);
    } catch {
      this.hub.logger.debug({ remote: this.remote, bytes: frame.length }, "undecodable datagram message dropped");
      return;
    }
    if (m.message !== "upstreamChunk") {
      this.hub.logger.debug(
        { remote: this.remote, kind: m.message },
        "datagram message other than upstream_chunk dropped",
      );
      return;
    }
    this.dispatch("upstreamChunk", m);
  }

  /** Upstream chunks (enc=proto) take the scan path: no object per data point. */
  private scan(frame: Uint8Array): ScannedUpstreamChunk | undefined {
    return this.encoding === "proto" ? scanUpstreamChunkMessage(frame) : undefined;
  }

  private dispatchChunk(chunk: ScannedUpstreamChunk): void {
    if (this.allowed && !this.permitted("upstreamChunk", chunkBody(chunk))) return;
    try {
      up.chunk(this, chunk);
    } catch (e) {
      this.failed("upstreamChunk", chunkBody(chunk), e);
    }
  }

  /** Whether the subject may send `kind`; a refusal answers it otherwise. */
  private permitted(kind: string, body: Record<string, unknown>): boolean {
    if (!this.allowed || this.allowed.has(kind) || kind === "ping" || kind === "pong" || kind === "disconnect")
      return true;
    const r = refusalFor(kind, body, ResultCode.AUTH_FAILED, `${kind} not allowed`);
    if (r) this.sendMessage(r);
    return false;
  }

  private failed(kind: string, body: Record<string, unknown>, e: unknown): void {
    this.hub.logger.warn({ remote: this.remote, kind, err: String(e) }, "iscp request failed");
    const r = refusalFor(kind, body, ResultCode.PROCESS_FAILED, "internal error");
    if (r) this.sendMessage(r);
  }

  private dispatch(kind: NonNullable<iscp2.Message["message"]>, m: iscp2.Message): void {
    if (!CLIENT_ONLY.has(kind)) return this.disconnect(ResultCode.PROTOCOL_ERROR, `unexpected ${kind}`);
    const body = m[kind] as unknown as Record<string, unknown>;
    if (!this.permitted(kind, body)) return;
    const fail = (e: unknown) => this.failed(kind, body, e);
    try {
      switch (kind) {
        case "ping":
          return this.sendMessage({ pong: { requestId: m.ping!.requestId ?? 0 } });
        case "pong":
          return this.ping.onPong(m.pong!.requestId ?? 0);
        case "disconnect":
          this.transport.close();
          return this.onClosed("client disconnect");
        case "upstreamOpenRequest":
          return void up.open(this, m.upstreamOpenRequest!).catch(fail);
        case "upstreamResumeRequest":
          return void up.resume(this, m.upstreamResumeRequest!).catch(fail);
        case "upstreamCloseRequest":
          return void up.close(this, m.upstreamCloseRequest!).catch(fail);
        case "upstreamChunk":
          return up.chunk(this, up.chunkIn(m.upstreamChunk!));
        case "upstreamMetadata":
          return void up.metadata(this, m.upstreamMetadata!).catch(fail);
        case "downstreamOpenRequest":
          return down.open(this, m.downstreamOpenRequest!);
        case "downstreamResumeRequest":
          return down.resume(this, m.downstreamResumeRequest!);
        case "downstreamCloseRequest":
          return down.close(this, m.downstreamCloseRequest!);
        case "downstreamChunkAck":
          return down.chunkAck(this, m.downstreamChunkAck!);
        case "downstreamMetadataAck":
          return;
        case "upstreamCall":
          return void down.call(this, m.upstreamCall!).catch(fail);
      }
    } catch (e) {
      fail(e);
    }
  }

  private async handleConnect(req: iscp2.IConnectRequest): Promise<void> {
    clearTimeout(this.connectTimer);
    const L = this.hub.limits;
    const requestId = req.requestId ?? 0;
    const refuse = (code: iscp2.ResultCode, why: string) => {
      this.hub.logger.info(
        { remote: this.remote, nodeId: req.nodeId, code: resultCodeName(code), why },
        "iscp connect refused",
      );
      this.sendMessage({
        connectResponse: { requestId, protocolVersion: "2.0.0", resultCode: code, resultString: why },
      });
      this.transport.close();
      this.onClosed(why);
    };
    const terms = connectTerms(req, L);
    if ("code" in terms) return refuse(terms.code, terms.why);
    const { pingInterval, pingTimeout, project, nodeId } = terms;
    this.state = "authenticating";
    // Nothing is read while the token is checked (a slow check must not let a client fill memory): what the
    // transport read already is kept in the backlog, the rest waits in the socket (TCP backpressure).
    this.transport.pauseInput?.();
    const auth = await authenticateWithin(this.authenticate, terms, L.connectTimeoutMs, this.hub.logger, this.remote);
    if (this.state !== "authenticating") return; // transport closed meanwhile
    if (!auth.ok) return refuse(auth.resultCode, auth.resultString ?? resultCodeName(auth.resultCode));
    this.state = "open";
    this.nodeId = nodeId;
    this.projectUuid = project;
    this.subject = auth.subject;
    this.allowed = auth.allowedMessages;
    this.hub.conns.add(this);
    this.sendMessage({
      connectResponse: { requestId, protocolVersion: "2.0.0", resultCode: ResultCode.SUCCEEDED, resultString: "OK" },
    });
    this.hub.logger.info({ remote: this.remote, nodeId, project, subject: auth.subject.uuid }, "iscp connected");
    this.ping.start(pingInterval, Math.max(pingTimeout, L.serverPingTimeoutFloorSec));
    const backlog = this.backlog;
    this.backlog = [];
    this.backlogBytes = 0;
    for (const f of backlog) this.onFrame(f);
    // Unless the backlog's held messages stopped the input meanwhile (ConnIntake).
    if (!this.intake.socketPaused && this.state === "open") this.transport.resumeInput?.();
  }

  /** Relay data was queued, or the transport drained (ConnOutput). */
  wake(): void {
    if (this.state === "open") this.output.wake();
  }

  /** A stream's ack is due now: sent in this turn's write, with the connection's other acks. */
  ackSoon(u: UpstreamStream): void {
    this.output.ackSoon(u);
  }

  /** An UpstreamChunkAck; results alone are encoded by hand (enc=proto). */
  sendAck(ack: iscp2.IUpstreamChunkAck, hasAliases: boolean): void {
    if (hasAliases || this.encoding !== "proto") return this.sendMessage({ upstreamChunkAck: ack });
    if (this.state !== "closed") this.transport.send(encodeResultsAck(ack.streamIdAlias ?? 0, ack.results ?? []));
  }

  /** The transport is gone: streams detach and start their expiry clocks. */
  private onClosed(reason: string): void {
    if (this.state === "closed") return;
    this.state = "closed";
    clearTimeout(this.connectTimer);
    this.ping.stop();
    this.intake.clear();
    this.hub.conns.delete(this);
    for (const u of this.upstreams.values()) {
      u.detach();
      if (this.hub.upstreams.has(u.id)) this.hub.scheduleUpstreamExpiry(u);
    }
    for (const d of this.downstreams.values()) {
      d.owner = null;
      if (this.hub.downstreams.has(d.id)) this.hub.scheduleDownstreamExpiry(d);
    }
    this.upstreams.clear();
    this.downstreams.clear();
    this.backlog = [];
    this.hub.logger.debug({ remote: this.remote, nodeId: this.nodeId, reason }, "iscp connection closed");
  }
}
