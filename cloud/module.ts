// A cloud module is one area of the service: its migrations, its routes, and its start-up work
// (adding members to Services, authenticators, seed data). server.ts lists the modules in order.
import type { AnyRoute } from "./http/route.js";
import type { Migration } from "./storage/migrate.js";
import type { Services } from "./services.js";
import type http from "node:http";
import type { FastPath } from "./http/pre-routing.js";

export interface CloudModule {
  name: string;
  migrations?: Migration[];
  routes?: AnyRoute[];
  /** Answered before routing, for every spelling the router gives their path (cloud/http/pre-routing.ts). */
  fastPaths?: FastPath[];
  /** Runs after migrations, in module order; may add members to svc. */
  init?(svc: Services): Promise<void> | void;
  /** Runs once the HTTP server exists (WebSocket upgrades, UDP listeners). */
  attach?(server: http.Server, svc: Services): Promise<void> | void;
}
