// A MessageTransport whose messages travel DEFLATE-compressed (message-deflate.ts): the connection layers above see
// whole messages as before. On WebSocket every message shares one context per direction, in order; on QUIC each
// message is compressed alone (context takeover is not negotiated there), so messages on the stream and on
// datagrams need no common order. A peer that frames its messages as zlib streams is answered so (message-deflate.ts);
// its first message (ConnectRequest) comes before any of ours. A message that does not decompress ends the transport.
import { decodeMessage } from "../../wire/message.js";
import type { MessageTransport } from "../message-transport.js";
import { MessageDeflater, MessageInflater } from "./message-deflate.js";
import type { CompressionParams } from "./negotiation.js";

/** `findPeerContext` (the broker): find out which context a context-takeover peer keeps (message-deflate.ts). */
export function compressedTransport(
  inner: MessageTransport,
  params: CompressionParams,
  maxMessageBytes: number,
  findPeerContext = false,
): MessageTransport {
  const isMessage = (plain: Buffer) => {
    try {
      decodeMessage(plain, inner.encoding);
      return true;
    } catch {
      return false;
    }
  };
  const deflater = new MessageDeflater(params, findPeerContext);
  const inflater = new MessageInflater(params, maxMessageBytes, findPeerContext ? isMessage : undefined);
  let closed = false;
  const closeCbs: ((reason: string) => void)[] = [];
  const fireClose = (reason: string) => {
    if (closed) return;
    closed = true;
    for (const cb of closeCbs) cb(reason);
  };
  inner.onClose(fireClose);
  const send = (frame: Uint8Array, written?: () => void) => {
    // Compressed at once: the caller's bytes are no longer needed.
    const out = deflater.deflate(frame);
    written?.();
    inner.send(out);
  };
  const t: MessageTransport = {
    kind: inner.kind,
    encoding: inner.encoding,
    send,
    sendUnreliable(frame, written) {
      if (inner.kind === "websocket") return send(frame, written);
      const out = deflater.deflate(frame);
      written?.();
      inner.sendUnreliable(out);
    },
    bufferedBytes: () => inner.bufferedBytes(),
    onMessage(cb) {
      inner.onMessage((frame, unreliable) => {
        if (closed) return;
        let plain: Buffer;
        try {
          plain = inflater.inflate(frame);
        } catch (e) {
          fireClose(`a compressed message could not be decompressed: ${e instanceof Error ? e.message : String(e)}`);
          inner.terminate();
          return;
        }
        // Answer in the framing the peer uses (a zlib header on QUIC: iscp-go before 1.1.0), with the context it keeps.
        if (inflater.zlibFramed) deflater.zlibFramed = true;
        deflater.peerContext = inflater.peerContext;
        cb(plain, unreliable);
      });
    },
    onDrain: (cb) => inner.onDrain(cb),
    onClose: (cb) => void closeCbs.push(cb),
    close: () => inner.close(),
    terminate: () => inner.terminate(),
  };
  if (inner.pauseInput && inner.resumeInput) {
    t.pauseInput = () => inner.pauseInput!();
    t.resumeInput = () => inner.resumeInput!();
  }
  if (inner.datagramStats) t.datagramStats = () => inner.datagramStats!();
  if (inner.corked) t.corked = (fn) => inner.corked!(fn);
  return t;
}
