// The UDP socket under a @matrixai/quic client or server gets 4 MiB receive and send buffers. With the
// default 208 KiB, bulk sends overflowed the receiver's buffer on loopback (the kernel's UDP
// RcvbufErrors grew by thousands per run), and each drop made QUIC's congestion control back off.
// @matrixai/quic has no option for it: this reaches its internals (`socket`, a QUICSocket whose
// `socket` is the dgram.Socket); should they change, nothing is widened and nothing breaks.
import type dgram from "node:dgram";
import { lookup } from "node:dns/promises";
import { BlockList, isIP } from "node:net";

/** Asked of the kernel; Linux caps it at net.core.rmem_max / wmem_max. */
const UDP_BUFFER_BYTES = 4 * 1024 * 1024;

/** The dgram socket under a QUICClient or QUICServer (its QUICSocket's `socket`), if the internals are there. */
export function udpSocketOf(owner: object): dgram.Socket | undefined {
  const udp = (owner as { socket?: { socket?: unknown } }).socket?.socket;
  return udp && typeof (udp as dgram.Socket).send === "function" ? (udp as dgram.Socket) : undefined;
}

/** False when the socket is not there or refused (its defaults then stay). */
export function widenUdpBuffers(owner: object): boolean {
  const udp = udpSocketOf(owner);
  try {
    udp?.setRecvBufferSize(UDP_BUFFER_BYTES);
    udp?.setSendBufferSize(UDP_BUFFER_BYTES);
    return udp !== undefined;
  } catch {
    // Not bound yet or refused by the kernel: the defaults stay.
    return false;
  }
}

// UDP payload size. @matrixai/quic's default, 1,350 bytes, fits any real path without IP fragmentation,
// but its per-packet cost in JavaScript bounds a connection to a few thousand packets a second.
// On loopback there is no path MTU to respect (lo's MTU is 64 KiB, which is also why TCP there sends
// 64 KiB segments), so a client whose server is a loopback address sends packets of up to
// LOOPBACK_UDP_PAYLOAD bytes: with a limit of 65,507 quiche built none larger than 16,383 anyway. Every other
// destination keeps the default. Receiving sides always accept up to quiche's maximum, 65,527 bytes:
// that only tells the peer what we can take, and each peer still sends no more than its own limit.

/** The largest packet quiche built on loopback under a 65,507-byte limit (strace of the sends): more changes nothing. */
export const LOOPBACK_UDP_PAYLOAD = 16_383;
/** quiche's own default and maximum for received UDP payloads. */
export const MAX_RECV_UDP_PAYLOAD = 65_527;

const loopback = new BlockList();
loopback.addSubnet("127.0.0.0", 8, "ipv4");
loopback.addAddress("::1", "ipv6");
loopback.addSubnet("::ffff:127.0.0.0", 104, "ipv6");

/** The UDP payload settings for a client connecting to `host` (a name is resolved the way the client will). */
export async function udpPayloadConfig(
  host: string,
): Promise<{ maxSendUdpPayloadSize?: number; maxRecvUdpPayloadSize: number }> {
  let address = host;
  if (isIP(host) === 0) {
    try {
      address = (await lookup(host)).address;
    } catch {
      // Unresolvable here: the client's own lookup reports it; keep the safe default.
      return { maxRecvUdpPayloadSize: MAX_RECV_UDP_PAYLOAD };
    }
  }
  const family = isIP(address) === 6 ? "ipv6" : "ipv4";
  return loopback.check(address, family)
    ? { maxSendUdpPayloadSize: LOOPBACK_UDP_PAYLOAD, maxRecvUdpPayloadSize: MAX_RECV_UDP_PAYLOAD }
    : { maxRecvUdpPayloadSize: MAX_RECV_UDP_PAYLOAD };
}

/**
 * Bytes the library reads from a stream per call (its default is 4 KiB). Each read is a pull through a web stream
 * and a drain request, and a loopback packet carries up to 16 KiB: one read per packet instead of four. Each
 * stream holds one buffer of this size.
 */
export const STREAM_READ_CHUNK = 16 * 1024;
