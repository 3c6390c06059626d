// Decoder/encoder factory per IPC `format`.
import type { DecoderOptions, FrameDecoder, FrameEncoder } from "./codec.js";
import { IscpV2CompatDecoder, IscpV2CompatEncoder } from "./iscp-v2-compat.js";
import { LoggerMsgDecoder, LoggerMsgEncoder, type LoggerMsgDecoderOptions } from "./logger-msg.js";
import type { IpcFormat } from "./schema.js";

export function createDecoder(format: IpcFormat, opts: LoggerMsgDecoderOptions | DecoderOptions): FrameDecoder {
  return format === "logger-msg" ? new LoggerMsgDecoder(opts) : new IscpV2CompatDecoder(opts);
}

export function createEncoder(format: IpcFormat): FrameEncoder {
  return format === "logger-msg" ? new LoggerMsgEncoder() : new IscpV2CompatEncoder();
}
