// One-time iSCP tickets (POST /iscp/tickets): for clients that cannot set headers on a WebSocket
// upgrade (browsers). A ticket is 256 random bits, kept only as its SHA-256 digest, valid once
// within TICKET_TTL_MS, and stands for the principal that asked for it.
import { createHash, randomBytes } from "node:crypto";
import type { Principal } from "../../auth/principal.js";

export const TICKET_TTL_MS = 60_000;

interface Held {
  principal: Principal;
  expiresAt: number;
}

const digest = (ticket: string) => createHash("sha256").update(ticket).digest("base64url");

export class TicketStore {
  private readonly held = new Map<string, Held>();

  issue(principal: Principal, now = Date.now()): { ticket: string; expired_at: string; created_at: string } {
    this.sweep(now);
    const ticket = randomBytes(32).toString("base64");
    this.held.set(digest(ticket), { principal, expiresAt: now + TICKET_TTL_MS });
    return { ticket, expired_at: new Date(now + TICKET_TTL_MS).toISOString(), created_at: new Date(now).toISOString() };
  }

  /** The ticket's principal, once: a second use, or a use after expiry, finds nothing. */
  consume(ticket: string, now = Date.now()): Principal | undefined {
    const key = digest(ticket);
    const held = this.held.get(key);
    if (!held) return undefined;
    this.held.delete(key);
    return held.expiresAt > now ? held.principal : undefined;
  }

  private sweep(now: number) {
    for (const [k, v] of this.held) if (v.expiresAt <= now) this.held.delete(k);
  }
}
