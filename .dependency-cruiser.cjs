// Import rules of the layout (see CONTRIBUTING.md). Checked by `npm run lint`
// through scripts/check-imports.mjs, which runs dependency-cruiser's API so the
// check also works on Node 20 (the 18.x command line refuses to start there).
//
// Type-only imports (`import type`) vanish at compile time: they may close a
// cycle or cross a boundary where the rule says so, value imports may not.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-value-cycle",
      comment: "A cycle of value imports makes load order matter: split the shared part out.",
      severity: "error",
      from: {},
      to: {
        circular: true,
        dependencyTypesNot: ["type-only"],
        viaOnly: { dependencyTypesNot: ["type-only"] },
      },
    },
    {
      name: "runtime-not-to-cloud",
      comment: "The edge agent ships without the cloud peer: runtime/ must not import cloud/.",
      severity: "error",
      from: { path: "^runtime/" },
      to: { path: "^cloud/" },
    },
    {
      name: "agent-not-to-sqlite3",
      comment:
        "sqlite3 is the cloud's optional native module (not installable on every device): the agent and the " +
        "code it loads (runtime/, machines/, proto/, lib/) never import it, not even its types.",
      severity: "error",
      from: { path: "^(runtime|machines|proto|lib)/" },
      to: { path: "(^|node_modules/)sqlite3(/|$)" },
    },
    {
      name: "queue-is-the-store",
      comment:
        "runtime/queue is the durable store and the formats of what it stores. The stages that feed it and drain it " +
        "(datapath: router, chunk batcher, send cursor; deferred: upload batches; iscp: the sender) import it, " +
        "never the reverse, so a data point passes into the queue once and out once.",
      severity: "error",
      from: { path: "^runtime/queue/" },
      to: { path: "^runtime/(datapath|deferred|iscp|api|cli|connectors|settings)/" },
    },
    {
      name: "machines-not-to-runtime-values",
      comment:
        "Machines are pure definitions; the runtime provides their actors. Only type-only imports " +
        "(e.g. settings types) of runtime/ are allowed.",
      severity: "error",
      from: { path: "^machines/" },
      to: { path: "^runtime/", dependencyTypesNot: ["type-only"] },
    },
    {
      name: "proto-stands-alone",
      comment: "proto/ (iSCP wire and transports) serves both ends: it imports neither end nor the machines.",
      severity: "error",
      from: { path: "^proto/" },
      to: { path: "^(cloud|runtime|machines)/" },
    },
    {
      name: "lib-stands-alone",
      comment: "lib/ is shared by both ends and imports nothing of ours but lib/.",
      severity: "error",
      from: { path: "^lib/" },
      to: { path: "^(cloud|runtime|machines|proto|bench|bin|tests)/" },
    },
    {
      name: "areas-meet-through-modules",
      comment:
        "A cloud area (any folder of cloud/ but the infrastructure: http, database, auth, mail, cli) reaches another " +
        "area only through what that area offers: its service/, its schemas.ts, or its module.ts (the module's " +
        "public file). Types may be imported from anywhere (they vanish at compile time).",
      severity: "error",
      from: { path: "^cloud/(?!(?:http|database|auth|mail|cli)/)([^/]+)/" },
      to: {
        path: "^cloud/(?!(?:http|database|auth|mail|cli)/)[^/]+/",
        pathNot: ["^cloud/$1/", "^cloud/[^/]+/(service/|schemas\\.ts$|module\\.ts$)"],
        dependencyTypesNot: ["type-only"],
      },
    },
    {
      name: "infrastructure-not-to-areas",
      comment:
        "The cloud's infrastructure (http, database, auth, mail) knows no area: an area contributes to it through " +
        "its module's extension points (cloud/module-contract.ts), e.g. error renderers and fast paths.",
      severity: "error",
      from: { path: "^cloud/(http|database|auth|mail)/" },
      to: { path: "^cloud/(?!(?:http|database|auth|mail|cli)/)[^/]+/", dependencyTypesNot: ["type-only"] },
    },
    {
      name: "console-web-not-imported",
      comment: "cloud/console/web is browser code bundled by Vite: server code (and everything else) never imports it.",
      severity: "error",
      from: { pathNot: "^cloud/console/web/" },
      to: { path: "^cloud/console/web/" },
    },
    {
      name: "console-web-stands-alone",
      comment:
        "The browser console speaks to the peer over its REST API only: it imports nothing of ours outside cloud/console/web.",
      severity: "error",
      from: { path: "^cloud/console/web/" },
      to: { path: "^(cloud/(?!console/web/)|runtime|machines|proto|lib|bin|bench|tests)/" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    // Type-only imports must be seen to be told apart from value imports.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
    },
  },
};
