// What the console needs to know of the peer's settings: where map tiles come from (none: the map draws the
// track alone). For signed-in users only: a tile URL may carry the operator's key for the tile service.
import { defineRoute } from "../../http/route.js";
import { ConsoleSettings } from "../schemas.js";

export const consoleSettingsRoute = defineRoute({
  operationId: "getConsoleSettings",
  method: "GET",
  path: "/console/settings",
  tag: "console",
  summary: "The web console's settings: the map tiles' URL template and attribution, or null when none is set",
  auth: "signed-in",
  success: 200,
  response: ConsoleSettings,
  handler: (_req, svc) => ({
    map_tiles: svc.config.mapTilesUrl
      ? { url: svc.config.mapTilesUrl, attribution: svc.config.mapTilesAttribution ?? "" }
      : null,
  }),
});
