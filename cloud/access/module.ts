// The access area: the one access decision (the route guard's `svc.access`, Check access and Check own
// access), an engine over the organisation index and the catalogue's scopes (docs/access-control.md).
import type { ProvidingModule } from "../module-contract.js";
import type { Services } from "../services.js";
import { accessRoutes } from "./routes/check-access.js";

export const accessModule: ProvidingModule<Pick<Services, "org">, Pick<Services, "access">> = {
  name: "access",
  routes: accessRoutes,
  provide: (svc) => ({ access: { allows: svc.org.allows } }),
};
