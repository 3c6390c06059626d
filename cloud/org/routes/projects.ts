// Projects and project edges (intdash REST API: listMyProjects to deleteProject, and the project edge operations).
import { defineRoute } from "../../http/route.js";
import {
  AddProjectEdgeRequest,
  CreateProjectRequest,
  GroupParams,
  ListProjectsQuery,
  Project,
  ProjectEdge,
  ProjectEdgeParams,
  ProjectEdges,
  ProjectEdgesQuery,
  ProjectParams,
  Projects,
  TreeQuery,
  UpdateProjectEdgeRequest,
  UpdateProjectRequest,
} from "../schemas.js";
import { projectView } from "../service/views.js";
import { paging, sorting, userOf } from "./route-helpers.js";

const tag = "auth_Projects";
const edgeTag = "auth_Project Edges";

export const projectRoutes = [
  defineRoute({
    operationId: "listMyProjects",
    method: "GET",
    path: "/auth/users/me/projects",
    tag,
    auth: "signed-in",
    query: TreeQuery,
    success: 200,
    response: Projects,
    handler: ({ principal, query }, svc) =>
      svc.org.tree.listProjects(
        { uuids: [...svc.org.index.projectsOf(userOf(principal))] },
        sorting(query),
        paging(query),
      ),
  }),
  defineRoute({
    operationId: "listGroupProjects",
    method: "GET",
    path: "/auth/groups/{group_uuid}/projects",
    tag,
    params: GroupParams,
    query: TreeQuery,
    success: 200,
    response: Projects,
    errors: [404],
    handler: async ({ params, query }, svc) => {
      const g = await svc.org.tree.groupRow(params.group_uuid);
      return svc.org.tree.listProjects({ group: g.uuid }, sorting(query), paging(query));
    },
  }),
  defineRoute({
    operationId: "createProject",
    method: "POST",
    path: "/auth/groups/{group_uuid}/projects",
    tag,
    params: GroupParams,
    body: CreateProjectRequest,
    success: 201,
    response: Project,
    errors: [403, 404, 409],
    handler: ({ principal, params, body }, svc) => svc.org.tree.createProject(params.group_uuid, body.name, principal),
  }),
  defineRoute({
    operationId: "listProjects",
    method: "GET",
    path: "/auth/projects",
    tag,
    query: ListProjectsQuery,
    success: 200,
    response: Projects,
    handler: ({ query }, svc) =>
      svc.org.tree.listProjects({ sinceCreatedAt: query.since_created_at }, sorting(query), paging(query)),
  }),
  defineRoute({
    operationId: "getProject",
    method: "GET",
    path: "/auth/projects/{project_uuid}",
    tag,
    params: ProjectParams,
    success: 200,
    response: Project,
    errors: [404],
    handler: async ({ params }, svc) => projectView(await svc.org.tree.projectRow(params.project_uuid)),
  }),
  defineRoute({
    operationId: "updateProject",
    method: "PATCH",
    path: "/auth/projects/{project_uuid}",
    tag,
    params: ProjectParams,
    body: UpdateProjectRequest,
    success: 200,
    response: Project,
    errors: [404, 409],
    handler: ({ params, body }, svc) => svc.org.tree.renameProject(params.project_uuid, body.name),
  }),
  defineRoute({
    operationId: "deleteProject",
    method: "DELETE",
    path: "/auth/projects/{project_uuid}",
    tag,
    params: ProjectParams,
    success: 204,
    errors: [404],
    handler: async ({ principal, params }, svc) =>
      void (await svc.org.tree.deleteProject(params.project_uuid, principal!)),
  }),
  // --- project edges ---
  defineRoute({
    operationId: "listProjectEdges",
    method: "GET",
    path: "/auth/projects/{project_uuid}/edges",
    tag: edgeTag,
    params: ProjectParams,
    query: ProjectEdgesQuery,
    success: 200,
    response: ProjectEdges,
    errors: [404],
    handler: ({ params, query }, svc) =>
      svc.org.projectEdges.list(
        params.project_uuid.toLowerCase(),
        query["edge_uuid[]"],
        sorting(query, "nickname+"),
        paging(query),
      ),
  }),
  defineRoute({
    operationId: "addProjectEdges",
    method: "POST",
    path: "/auth/projects/{project_uuid}/edges",
    tag: edgeTag,
    params: ProjectParams,
    body: AddProjectEdgeRequest,
    success: 200,
    response: ProjectEdge,
    errors: [404, 409],
    handler: ({ params, body }, svc) =>
      svc.org.projectEdges.add(params.project_uuid.toLowerCase(), body.edge_name, body.nickname),
  }),
  defineRoute({
    operationId: "getProjectEdge",
    method: "GET",
    path: "/auth/projects/{project_uuid}/edges/{edge_uuid}",
    tag: edgeTag,
    params: ProjectEdgeParams,
    success: 200,
    response: ProjectEdge,
    errors: [404],
    handler: ({ params }, svc) => svc.org.projectEdges.get(params.project_uuid.toLowerCase(), params.edge_uuid),
  }),
  defineRoute({
    operationId: "updateProjectEdge",
    method: "PATCH",
    path: "/auth/projects/{project_uuid}/edges/{edge_uuid}",
    tag: edgeTag,
    params: ProjectEdgeParams,
    body: UpdateProjectEdgeRequest,
    success: 200,
    alsoSuccess: [304],
    response: ProjectEdge,
    errors: [404, 409],
    handler: ({ params, body }, svc) =>
      svc.org.projectEdges.update(params.project_uuid.toLowerCase(), params.edge_uuid, body.nickname),
  }),
  defineRoute({
    operationId: "removeProjectEdge",
    method: "DELETE",
    path: "/auth/projects/{project_uuid}/edges/{edge_uuid}",
    tag: edgeTag,
    params: ProjectEdgeParams,
    success: 204,
    errors: [404],
    handler: async ({ params }, svc) =>
      void (await svc.org.projectEdges.remove(params.project_uuid.toLowerCase(), params.edge_uuid)),
  }),
];
