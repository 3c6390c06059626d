// Every route of the OAuth area, in one list for the module.
import type { AnyRoute } from "../http/route.js";
import { jwksRoute } from "./actions/jwks.js";
import { revocationRoute } from "./actions/revocation.js";
import { tokenRoute } from "./actions/token.js";

export const oauthRoutes: AnyRoute[] = [tokenRoute, revocationRoute, jwksRoute];
