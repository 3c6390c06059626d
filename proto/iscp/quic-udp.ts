// The UDP socket under a @matrixai/quic client or server gets 4 MiB receive and send buffers. With the
// default 208 KiB, bulk sends overflowed the receiver's buffer on loopback (the kernel's UDP
// RcvbufErrors grew by thousands per run), and each drop made QUIC's congestion control back off.
// @matrixai/quic has no option for it: this reaches its internals (`socket`, a QUICSocket whose
// `socket` is the dgram.Socket); should they change, nothing is widened and nothing breaks.
import type dgram from "node:dgram";

/** Asked of the kernel; Linux caps it at net.core.rmem_max / wmem_max. */
const UDP_BUFFER_BYTES = 4 * 1024 * 1024;

export function widenUdpBuffers(owner: object): void {
  const udp = (owner as { socket?: { socket?: dgram.Socket } }).socket?.socket;
  try {
    udp?.setRecvBufferSize(UDP_BUFFER_BYTES);
    udp?.setSendBufferSize(UDP_BUFFER_BYTES);
  } catch {
    // Not bound yet or refused by the kernel: the defaults stay.
  }
}
