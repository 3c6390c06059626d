// Stream ids travel as 16 raw bytes. iscp-ts validates them as RFC 4122 v1-5 (or nil), so the
// broker only ever hands out v4 UUIDs from randomUUID().
import { randomUUID } from "node:crypto";

export function uuidToBytes(uuid: string): Uint8Array {
  const hex = uuid.replace(/-/g, "");
  if (!/^[0-9a-fA-F]{32}$/.test(hex)) throw new Error(`not a UUID: ${uuid}`);
  return new Uint8Array(Buffer.from(hex, "hex"));
}

/** Lower-case dashed form; throws unless exactly 16 bytes. */
export function bytesToUuid(b: Uint8Array | null | undefined): string {
  if (!b || b.length !== 16) throw new Error("stream id must be 16 bytes");
  const h = Buffer.from(b).toString("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

export function newUuid(): { uuid: string; bytes: Uint8Array } {
  const uuid = randomUUID();
  return { uuid, bytes: uuidToBytes(uuid) };
}
