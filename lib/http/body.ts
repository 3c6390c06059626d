// Reads a request body with a hard size cap, then parses it by kind: JSON, form, or raw bytes.
import type { IncomingMessage } from "node:http";
import { BodyCutShort, BodyNotJson, BodyTooLarge } from "./problems.js";

export type BodyKind = "json" | "form" | "raw";

/**
 * The whole body, or BodyTooLarge as soon as it passes `limit` (the rest is drained, not stored, so the
 * client still reads the 413), or BodyCutShort when the client goes away first (nothing waits forever).
 */
export function readRaw(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers["content-length"] ?? "0");
    if (declared > limit) return reject(new BodyTooLarge(limit));
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        req.removeAllListeners("data");
        req.resume();
        reject(new BodyTooLarge(limit));
      } else chunks.push(c);
    });
    req.once("end", () => resolve(Buffer.concat(chunks)));
    req.once("error", () => reject(new BodyCutShort()));
    req.once("close", () => {
      if (!req.complete) reject(new BodyCutShort());
    });
  });
}

export async function readBody(req: IncomingMessage, kind: BodyKind, limit: number): Promise<unknown> {
  const raw = await readRaw(req, limit);
  if (kind === "raw") return raw;
  const text = raw.toString("utf8");
  if (kind === "form") return Object.fromEntries(new URLSearchParams(text));
  if (text.trim() === "") return {};
  try {
    return JSON.parse(text);
  } catch {
    throw new BodyNotJson();
  }
}
