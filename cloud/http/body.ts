// Reads a request body with a hard size cap, then parses it by content type.
// JSON and form bodies are the only ones the API takes; raw bodies are for protobuf uploads.
import type { Context } from "koa";
import { ApiError, badRequest } from "./errors.js";

export const DEFAULT_BODY_LIMIT = 1024 * 1024;

export async function readRaw(ctx: Context, limit = DEFAULT_BODY_LIMIT): Promise<Buffer> {
  const declared = Number(ctx.get("content-length") || "0");
  if (declared > limit) throw tooLarge(limit);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw tooLarge(limit);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

const tooLarge = (limit: number) =>
  new ApiError(413, "payload_too_large", `request body exceeds ${limit} bytes`);

export type BodyKind = "json" | "form" | "raw";

export async function readBody(ctx: Context, kind: BodyKind, limit?: number): Promise<unknown> {
  const raw = await readRaw(ctx, limit);
  if (kind === "raw") return raw;
  const text = raw.toString("utf8");
  if (kind === "form") return Object.fromEntries(new URLSearchParams(text));
  if (text.trim() === "") return {};
  try {
    return JSON.parse(text);
  } catch {
    throw badRequest("request body is not valid JSON");
  }
}
