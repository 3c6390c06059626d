// Which UDP payload size a QUIC client uses: large only towards loopback, where no path MTU applies.
import { describe, expect, it } from "vitest";
import {
  LOOPBACK_UDP_PAYLOAD,
  MAX_RECV_UDP_PAYLOAD,
  udpPayloadConfig,
} from "../../../../../proto/transport/quic/patches/udp.js";

describe("udpPayloadConfig", () => {
  it.each(["127.0.0.1", "127.8.9.10", "::1", "::ffff:127.0.0.1", "localhost"])(
    "sends large packets to loopback %s",
    async (host) => {
      expect(await udpPayloadConfig(host)).toEqual({
        maxSendUdpPayloadSize: LOOPBACK_UDP_PAYLOAD,
        maxRecvUdpPayloadSize: MAX_RECV_UDP_PAYLOAD,
      });
    },
  );

  it.each(["192.0.2.10", "10.1.2.3", "2001:db8::1", "128.0.0.1", "no-such-host.invalid"])(
    "keeps the library's default towards %s",
    async (host) => {
      // No maxSendUdpPayloadSize: @matrixai/quic's 1,350 bytes, safe on any real path.
      expect(await udpPayloadConfig(host)).toEqual({ maxRecvUdpPayloadSize: MAX_RECV_UDP_PAYLOAD });
    },
  );
});
