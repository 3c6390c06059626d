// The contract of a cloud module: one area of the service. A module declares what it needs (the type
// of `provide`'s argument) and returns what it provides (`provide`'s result, merged into Services by
// cloud/modules.ts); everything else it contributes goes through the named extension points below,
// which cloud/server.ts runs in a visible order. No module changes another's objects.
import type http from "node:http";
import type { AnyRoute, Reply } from "./http/route.js";
import type { FastPath } from "./http/pre-routing.js";
import type { Migration } from "./database/migrate.js";
import type { CoreServices, Services } from "./services.js";
import type { Authenticator } from "./auth/principal.js";
import type { DomainEventMap } from "./events.js";
import type { ClientResolver } from "./oauth/clients/model.js";

/** Renders the errors an area defines, or returns undefined for any other error. */
export type AreaErrorRenderer = (err: unknown) => Reply | undefined;

export interface CloudModule<Needs = CoreServices, Provides = {}> {
  name: string;
  /** The area's migrations (its own range of versions); all run in order before any `provide`. */
  migrations?: Migration[];
  routes?: AnyRoute[];
  /** Extension point: answered before routing, for every spelling the router gives their path (cloud/http/pre-routing.ts). */
  fastPaths?: FastPath[];
  /** Extension point: asked in module order before the infrastructure's own error rendering (cloud/http/error-reply.ts). */
  errorRenderers?: AreaErrorRenderer[];
  /** Builds the area's Services members from what it needs; may register close hooks (`svc.onClose`). */
  provide?(svc: Needs): Promise<Provides> | Provides;
  /** Extension point: how callers of the API may authenticate, asked in module order. */
  authenticators?(svc: Services): Authenticator[];
  /** Extension point: who knows an OAuth client_id (the oauth area's own clients are asked last). */
  clientResolvers?(svc: Services): ClientResolver[];
  /** Extension point: listeners of domain events (cloud/events.ts), subscribed in module order. */
  on?: { [K in keyof DomainEventMap]?: (svc: Services, payload: DomainEventMap[K]) => Promise<void> | void };
  /** Once the HTTP server exists, before it listens: WebSocket upgrades, other listeners. */
  attach?(server: http.Server, svc: Services): Promise<void> | void;
  /** Extension point: the server stopped accepting; end long-lived answers (event streams) so it can close. */
  serverClosing?(svc: Services): void;
}

export type AnyCloudModule = CloudModule<any, any>;

/** A module that provides Services members (its `provide` is required). */
export type ProvidingModule<Needs, Provides> = CloudModule<Needs, Provides> & {
  provide(svc: Needs): Promise<Provides> | Provides;
};
