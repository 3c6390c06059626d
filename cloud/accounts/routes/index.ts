// Every accounts route, in one list for the module.
import type { AnyRoute } from "../../http/route.js";
import { emailsRoutes } from "./emails.js";
import { passwordsRoutes } from "./passwords.js";
import { rolesRoutes } from "./roles.js";
import { tokensRoutes } from "./tokens.js";
import { usersRoutes } from "./users.js";

export const accountsRoutes: AnyRoute[] = [
  ...usersRoutes,
  ...emailsRoutes,
  ...passwordsRoutes,
  ...tokensRoutes,
  ...rolesRoutes,
];
