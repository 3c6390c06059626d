// Domain events: one area tells the others that something happened (a user was deleted) without
// knowing them. Areas add events to DomainEventMap by declaration merging; modules subscribe through
// their `on` member (cloud/module-contract.ts), which cloud/server.ts wires in module order.
import type { Logger } from "pino";

/** Event name → payload. */
export interface DomainEventMap {
  /** A user is gone (cloud/accounts/service/users.ts deleteUser); the payload is its UUID. */
  userDeleted: string;
}

export type DomainEventName = keyof DomainEventMap;
export type DomainListener<K extends DomainEventName> = (payload: DomainEventMap[K]) => Promise<void> | void;

export class DomainEvents {
  private readonly listeners = new Map<DomainEventName, Array<DomainListener<any>>>();
  constructor(private readonly log: Logger) {}

  on<K extends DomainEventName>(name: K, fn: DomainListener<K>): void {
    this.listeners.set(name, [...(this.listeners.get(name) ?? []), fn]);
  }

  /** Runs every listener in subscription order; one that fails is logged and the others still run. */
  async emit<K extends DomainEventName>(name: K, payload: DomainEventMap[K]): Promise<void> {
    for (const fn of this.listeners.get(name) ?? []) {
      try {
        await fn(payload);
      } catch (err) {
        this.log.error({ err: { message: (err as Error).message }, event: name }, "domain event listener failed");
      }
    }
  }
}
