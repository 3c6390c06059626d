// The dashboards area: a project's saved dashboards for the console, the one each edge's measurements open on,
// and the display names and units of an edge's series (the peer's own operations, docs/measurements.md).
import type { ProvidingModule } from "../module-contract.js";
import type { CoreServices, Services } from "../services.js";
import { dashboardMigrations } from "./repo/migrations.js";
import { dashboardRoutes } from "./routes/dashboards.js";
import { DashboardService } from "./service/dashboard-service.js";

export const dashboardsModule: ProvidingModule<CoreServices, Pick<Services, "dashboards">> = {
  name: "dashboards",
  migrations: dashboardMigrations,
  routes: dashboardRoutes,
  provide: (svc) => ({ dashboards: new DashboardService(svc.db) }),
};
