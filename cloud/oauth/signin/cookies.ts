// Set-Cookie headers written by hand: Koa refuses `Secure` cookies on plain sockets, yet behind a
// TLS-terminating proxy the public URL is https and the cookie must be Secure.
import type { Context } from "koa";

export interface CookieOptions {
  maxAgeSeconds?: number;
  path: string;
  sameSite: "Lax" | "Strict";
  secure: boolean;
}

export function setCookie(ctx: Context, name: string, value: string, o: CookieOptions): void {
  const parts = [`${name}=${encodeURIComponent(value)}`, `Path=${o.path}`, "HttpOnly", `SameSite=${o.sameSite}`];
  if (o.maxAgeSeconds !== undefined) parts.push(`Max-Age=${o.maxAgeSeconds}`);
  if (o.secure) parts.push("Secure");
  ctx.append("Set-Cookie", parts.join("; "));
}

export const isHttps = (publicUrl: string) => publicUrl.startsWith("https:");
