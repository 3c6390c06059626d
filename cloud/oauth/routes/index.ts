// Every route of the OAuth area, in one list for the module.
import type { AnyRoute } from "../../http/route.js";
import { authorizationRoute } from "./authorization.js";
import { jwksRoute } from "./jwks.js";
import { signInPageRoute, signInSubmitRoute } from "./sign-in.js";
import { revocationRoute } from "./revocation.js";
import { introspectionRoute } from "./introspection.js";
import { tokenRoute } from "./token.js";
import { clientRoutes } from "./clients.js";

export const oauthRoutes: AnyRoute[] = [
  tokenRoute,
  authorizationRoute,
  signInPageRoute,
  signInSubmitRoute,
  revocationRoute,
  introspectionRoute,
  jwksRoute,
  ...clientRoutes,
];
