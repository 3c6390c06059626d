// Every accounts route, in one list for the module.
import type { AnyRoute } from "../../http/route.js";

export const accountsRoutes: AnyRoute[] = [];
