// iSCP v2 wire layer: one Message <-> bytes, for enc=proto and enc=json. No transport, no state.
import { iscp2 } from "../gen/iscp.js";
import descriptor from "../gen/iscp-descriptor.js";
import { JsonCodecError, loadRoot, messageFromJson, messageToJson } from "./json.js";

export { iscp2 };
export type Encoding = "proto" | "json";

/** A message as accepted by the encoders (plain object or decoded instance). */
export type Message = iscp2.IMessage;
/** The name of the member set in `Message.message`, e.g. "upstreamChunk". */

export const ResultCode = iscp2.ResultCode;
export type ResultCode = iscp2.ResultCode;
export const QoS = iscp2.QoS;
export type QoS = iscp2.QoS;

/** A frame that is not one well-formed iSCP message (maps to MALFORMED_MESSAGE). */
export class MalformedMessageError extends Error {}

const messageType = loadRoot(descriptor).lookupType("iscp2.Message");
const textDecoder = new TextDecoder("utf-8", { fatal: true });
const textEncoder = new TextEncoder();

export function encodeMessage(msg: Message, enc: Encoding): Uint8Array {
  if (enc === "json")
    return textEncoder.encode(JSON.stringify(messageToJson(messageType, msg as Record<string, unknown>)));
  return iscp2.Message.encode(msg).finish();
}

/** Decodes one message; throws MalformedMessageError unless exactly one kind is set. */
export function decodeMessage(bytes: Uint8Array, enc: Encoding): iscp2.Message {
  let m: iscp2.Message;
  try {
    if (enc === "json") {
      const json: unknown = JSON.parse(textDecoder.decode(bytes));
      if (typeof json !== "object" || json === null || Array.isArray(json)) throw new JsonCodecError("not an object");
      // Re-encoding gives JSON input exactly the shape (and defaults) of a binary decode.
      const plain = messageFromJson(messageType, json as Record<string, unknown>);
      m = iscp2.Message.decode(iscp2.Message.encode(plain).finish());
    } else {
      m = iscp2.Message.decode(bytes);
    }
  } catch (e) {
    throw new MalformedMessageError(e instanceof Error ? e.message : String(e));
  }
  if (!m.message) throw new MalformedMessageError("empty message");
  return m;
}

const resultNames = new Map<number, string>();
for (const [name, value] of Object.entries(iscp2.ResultCode)) {
  if (typeof value === "number" && !resultNames.has(value)) resultNames.set(value, name);
}
/** SUCCEEDED, AUTH_FAILED, ... (0 is reported as SUCCEEDED). */
export function resultCodeName(code: number): string {
  return resultNames.get(code) ?? `RESULT_${code}`;
}
