// Every route of the OAuth area, in one list for the module.
import type { AnyRoute } from "../http/route.js";
import { authorizationRoute } from "./actions/authorization.js";
import { jwksRoute } from "./actions/jwks.js";
import { signInPageRoute, signInSubmitRoute } from "./actions/sign_in.js";
import { revocationRoute } from "./actions/revocation.js";
import { tokenRoute } from "./actions/token.js";
import { clientRoutes } from "./clients/routes.js";

export const oauthRoutes: AnyRoute[] = [
  tokenRoute,
  authorizationRoute,
  signInPageRoute,
  signInSubmitRoute,
  revocationRoute,
  jwksRoute,
  ...clientRoutes,
];
