// The cloud peer's modules and how Services is built from them. This file and cloud/server.ts are the
// whole wiring: what each area needs and provides is in the types of `provideServices` below (an area
// listed before what it needs does not compile), and every extension point is run by server.ts.
import type { AnyCloudModule, ProvidingModule } from "./module-contract.js";
import type { CoreServices, Services } from "./services.js";
import { clusterModule } from "./cluster/module.js";
import { accountsModule } from "./accounts/module.js";
import { oauthModule } from "./oauth/module.js";
import { orgModule } from "./org/module.js";
import { accessModule } from "./access/module.js";
import { measurementsModule } from "./measurements/module.js";
import { brokerModule } from "./iscp/module.js";
import { webhooksModule } from "./webhooks/module.js";
import { dashboardsModule } from "./dashboards/module.js";
import { opsModule } from "./ops/module.js";
import { consoleModule } from "./console/module.js";

/** In start-up order: migrations, routes and every extension point's contributions follow it. */
export const modules: AnyCloudModule[] = [
  clusterModule,
  accountsModule,
  oauthModule,
  orgModule,
  accessModule,
  measurementsModule,
  webhooksModule,
  dashboardsModule,
  brokerModule,
  opsModule,
  consoleModule,
];

/** Adds what `provide` returns to the one Services object (later modules and handlers share it). */
async function add<S extends N, N extends object, P extends object>(svc: S, m: ProvidingModule<N, P>): Promise<S & P> {
  return Object.assign(svc, await m.provide(svc));
}

/** Runs every module's `provide` in order; each gets the core and what the modules before it provided. */
export async function provideServices(core: CoreServices): Promise<Services> {
  const withCluster = await add(core, clusterModule); //                    cluster: the bus between peers
  const withAccounts = await add(withCluster, accountsModule); //           accounts, mailer
  const withOAuth = await add(withAccounts, oauthModule); //                oauth
  const withOrg = await add(withOAuth, orgModule); //                       org
  const withAccess = await add(withOrg, accessModule); //                   access (the guard's decider)
  const withMeasurements = await add(withAccess, measurementsModule); //    measurements
  const withWebhooks = await add(withMeasurements, webhooksModule); //      webhooks
  const withDashboards = await add(withWebhooks, dashboardsModule); //     dashboards
  const withIscp = await add(withDashboards, brokerModule); //              iscp
  return await add(withIscp, consoleModule); //                             (the console's OAuth client)
}
