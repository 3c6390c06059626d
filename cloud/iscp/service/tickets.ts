// One-time iSCP tickets (POST /iscp/tickets): for clients that cannot set headers on a WebSocket
// upgrade (browsers). A ticket is 256 random bits, kept only as its SHA-256 digest, valid once
// within TICKET_TTL_MS, and stands for the principal that asked for it. A ticket stays in the memory of the
// peer that issued it; with several peers (--nats) the peer a WebSocket lands on asks the others for a ticket
// it does not hold, and the holder gives it up (once, as here).
import { createHash, randomBytes } from "node:crypto";
import type { Principal } from "../../auth/principal.js";
import { bytesJson, jsonBytes, type ClusterBus } from "../../cluster/service/bus.js";

const TICKET_SUBJECT = "cloud.iscp.ticket.consume";
/** How long a peer waits for another to give up a ticket it does not hold. */
const ASK_MS = 1_000;
/** 256 bits in base64, as issue() makes them. */
const TICKET_SHAPE = /^[A-Za-z0-9+/]{43}=$/;

export const TICKET_TTL_MS = 60_000;

interface Held {
  principal: Principal;
  expiresAt: number;
}

const digest = (ticket: string) => createHash("sha256").update(ticket).digest("base64url");

export class TicketStore {
  private readonly held = new Map<string, Held>();
  private bus: ClusterBus | undefined;

  /** Joins the cluster: answers the other peers' asks for tickets held here. */
  share(bus: ClusterBus): () => void {
    if (bus.kind === "in-process") return () => {};
    this.bus = bus;
    return bus.serve(TICKET_SUBJECT, (data) => {
      const digest = bytesJson<{ digest?: unknown }>(data).digest;
      const p = typeof digest === "string" ? this.take(digest) : undefined;
      return p ? jsonBytes({ principal: p }) : undefined;
    });
  }

  /** consume(), then the other peers when this one does not hold the ticket. */
  async consumeAnywhere(ticket: string, now = Date.now()): Promise<Principal | undefined> {
    const here = this.consume(ticket, now);
    // Only what has a ticket's shape is asked about: a JWT must not wait for the other peers' silence.
    if (here || !this.bus || !TICKET_SHAPE.test(ticket)) return here;
    const answer = await this.bus.request(TICKET_SUBJECT, jsonBytes({ digest: digest(ticket) }), ASK_MS);
    return answer ? bytesJson<{ principal?: Principal }>(answer).principal : undefined;
  }

  issue(principal: Principal, now = Date.now()): { ticket: string; expired_at: string; created_at: string } {
    this.sweep(now);
    const ticket = randomBytes(32).toString("base64");
    this.held.set(digest(ticket), { principal, expiresAt: now + TICKET_TTL_MS });
    return { ticket, expired_at: new Date(now + TICKET_TTL_MS).toISOString(), created_at: new Date(now).toISOString() };
  }

  /** The ticket's principal, once: a second use, or a use after expiry, finds nothing. */
  consume(ticket: string, now = Date.now()): Principal | undefined {
    return this.take(digest(ticket), now);
  }

  private take(key: string, now = Date.now()): Principal | undefined {
    const held = this.held.get(key);
    if (!held) return undefined;
    this.held.delete(key);
    return held.expiresAt > now ? held.principal : undefined;
  }

  private sweep(now: number) {
    for (const [k, v] of this.held) if (v.expiresAt <= now) this.held.delete(k);
  }
}
