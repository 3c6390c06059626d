// The list-shaped settings (streams, device-connector IPC channels, filters): the same five operations
// each, plus two state operations for streams and channels, built from one description per resource.
import * as Schema from "effect/Schema";
import {
  DownstreamCreate,
  DownstreamIpcCreate,
  DownstreamIpcSettings,
  DownstreamIpcUpdate,
  DownstreamSettings,
  DownstreamUpdate,
  Filter,
  FilterCreate,
  FilterUpdate,
  Id,
  IpcState,
  StreamState,
  UpstreamCreate,
  UpstreamIpcCreate,
  UpstreamIpcSettings,
  UpstreamIpcUpdate,
  UpstreamSettings,
  UpstreamUpdate,
  listOf,
} from "../../settings/schemas.js";
import type { CollectionName } from "../../settings/store.js";
import type { StatefulCollection } from "../../supervisor.js";
import { defineRoute, type AnyRoute } from "../route.js";

const IdParams = Schema.Struct({ id: Id });
const BoolFromQuery = Schema.transform(Schema.Literal("true", "false"), Schema.Boolean, {
  strict: true,
  decode: (s) => s === "true",
  encode: (b) => (b ? "true" : "false"),
});
const EnabledQuery = Schema.Struct({ enabled: Schema.optional(BoolFromQuery) });

interface Resource {
  name: CollectionName;
  path: string;
  tag: string;
  /** Operation ids in the order list, create, get, update, delete. */
  ops: [string, string, string, string, string];
  /** Human name for summaries, e.g. "Upstream Settings". */
  title: string;
  settings: Schema.Schema<any, any, never>;
  create: Schema.Schema<any, any, never>;
  update: Schema.Schema<any, any, never>;
  states?: { list: string; get: string; schema: Schema.Schema<any, any, never>; title: string };
}

function resourceRoutes(r: Resource): AnyRoute[] {
  const [list, create, get, update, del] = r.ops;
  const name = r.name;
  const routes: AnyRoute[] = [
    defineRoute({
      operationId: list,
      method: "GET",
      path: r.path,
      tag: r.tag,
      summary: `List ${r.title}`,
      success: 200,
      response: listOf(r.settings),
      handler: (_req, api) => ({ items: api.settings.list(name) }),
    }),
    defineRoute({
      operationId: create,
      method: "POST",
      path: r.path,
      tag: r.tag,
      summary: `Create ${r.title}`,
      body: r.create,
      success: 201,
      response: r.settings,
      errors: [409],
      handler: ({ body }, api) => api.settings.create(name, body as { id: string }),
    }),
    defineRoute({
      operationId: get,
      method: "GET",
      path: `${r.path}/{id}`,
      tag: r.tag,
      summary: `Get ${r.title}`,
      params: IdParams,
      success: 200,
      response: r.settings,
      errors: [404],
      handler: ({ params }, api) => api.settings.get(name, params.id),
    }),
    defineRoute({
      operationId: update,
      method: "PATCH",
      path: `${r.path}/{id}`,
      tag: r.tag,
      summary: `Update ${r.title} (fields not sent keep their values)`,
      params: IdParams,
      body: r.update,
      success: 200,
      response: r.settings,
      errors: [404, 409],
      handler: ({ params, body }, api) => api.settings.update(name, params.id, body as Record<string, unknown>),
    }),
    defineRoute({
      operationId: del,
      method: "DELETE",
      path: `${r.path}/{id}`,
      tag: r.tag,
      summary: `Delete ${r.title}`,
      params: IdParams,
      success: 204,
      errors: [404, 409],
      handler: ({ params }, api) => {
        api.settings.delete(name, params.id);
      },
    }),
  ];
  const states = r.states;
  if (states) {
    const kind = name as StatefulCollection;
    routes.push(
      defineRoute({
        operationId: states.list,
        method: "GET",
        path: `${r.path}/-/states`,
        tag: r.tag,
        summary: `List ${states.title}s (enabled=true|false filters)`,
        query: EnabledQuery,
        success: 200,
        response: Schema.Array(states.schema),
        handler: ({ query }, api) =>
          api.settings
            .list(kind)
            .filter((s) => query.enabled === undefined || s.enabled === query.enabled)
            .map((s) => api.states.state(kind, s)),
      }),
      defineRoute({
        operationId: states.get,
        method: "GET",
        path: `${r.path}/{id}/state`,
        tag: r.tag,
        summary: `Get ${states.title}`,
        params: IdParams,
        success: 200,
        response: states.schema,
        errors: [404],
        handler: ({ params }, api) => api.states.state(kind, api.settings.get(kind, params.id)),
      }),
    );
  }
  return routes;
}

const resources: Resource[] = [
  {
    name: "upstreams",
    path: "/upstreams",
    tag: "streams",
    title: "Upstream Settings",
    ops: [
      "listUpstreamSettings",
      "createUpstreamSettings",
      "getUpstreamSettings",
      "updateUpstreamSettings",
      "deleteUpstreamSettings",
    ],
    settings: UpstreamSettings,
    create: UpstreamCreate,
    update: UpstreamUpdate,
    states: { list: "listUpstreamStates", get: "getUpstreamState", schema: StreamState, title: "Upstream State" },
  },
  {
    name: "downstreams",
    path: "/downstreams",
    tag: "streams",
    title: "Downstream Settings",
    ops: [
      "listDownstreamSettings",
      "createDownstreamSettings",
      "getDownstreamSettings",
      "updateDownstreamSettings",
      "deleteDownstreamSettings",
    ],
    settings: DownstreamSettings,
    create: DownstreamCreate,
    update: DownstreamUpdate,
    states: { list: "listDownstreamStates", get: "getDownstreamState", schema: StreamState, title: "Downstream State" },
  },
  {
    name: "upstream_ipcs",
    path: "/device-connectors/upstream",
    tag: "device connectors",
    title: "Upstream Device Connector IPC Settings",
    ops: [
      "listUpstreamIpcSettings",
      "createUpstreamIpcSettings",
      "getUpstreamIpcSettings",
      "updateUpstreamIpcSettings",
      "deleteUpstreamIpcSettings",
    ],
    settings: UpstreamIpcSettings,
    create: UpstreamIpcCreate,
    update: UpstreamIpcUpdate,
    states: {
      list: "listUpstreamIpcStates",
      get: "getUpstreamIpcState",
      schema: IpcState,
      title: "Upstream IPC State",
    },
  },
  {
    name: "downstream_ipcs",
    path: "/device-connectors/downstream",
    tag: "device connectors",
    title: "Downstream Device Connector IPC Settings",
    ops: [
      "listDownstreamIpcSettings",
      "createDownstreamIpcSettings",
      "getDownstreamIpcSettings",
      "updateDownstreamIpcSettings",
      "deleteDownstreamIpcSettings",
    ],
    settings: DownstreamIpcSettings,
    create: DownstreamIpcCreate,
    update: DownstreamIpcUpdate,
    states: {
      list: "listDownstreamIpcStates",
      get: "getDownstreamIpcState",
      schema: IpcState,
      title: "Downstream IPC State",
    },
  },
  {
    name: "upstream_filters",
    path: "/filters/upstream",
    tag: "filters",
    title: "Upstream Filter",
    ops: [
      "listUpstreamFilters",
      "createUpstreamFilter",
      "getUpstreamFilter",
      "updateUpstreamFilter",
      "deleteUpstreamFilter",
    ],
    settings: Filter,
    create: FilterCreate,
    update: FilterUpdate,
  },
  {
    name: "downstream_filters",
    path: "/filters/downstream",
    tag: "filters",
    title: "Downstream Filter",
    ops: [
      "listDownstreamFilters",
      "createDownstreamFilter",
      "getDownstreamFilter",
      "updateDownstreamFilter",
      "deleteDownstreamFilter",
    ],
    settings: Filter,
    create: FilterCreate,
    update: FilterUpdate,
  },
];

export const collectionRoutes: AnyRoute[] = resources.flatMap(resourceRoutes);
