// The one way the cloud makes a router, so the application's routes (app.ts) and the pre-routing fast
// paths (pre-routing.ts) match a path alike: case-insensitive, a trailing slash optional.
import Router from "@koa/router";

export const createRouter = (): Router => new Router();
