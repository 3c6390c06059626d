// Which node_id a subject may connect with. Viewers see an upstream as its node's, and E2E calls go to every
// connection with the destination node_id, so a node_id naming an edge or a user is that subject's only:
// - an edge: its own UUID, always;
// - a user: its own UUID, an edge it owns (aptpod's SDK lessons upstream as the user's own edge with the user's
//   API token), or a node_id that names no edge and no user (viewers often send "" or any string); a super user
//   may use any;
// - never another user's UUID, nor an edge the user does not own (even one of a project the user belongs to).
import type { Principal } from "../../auth/principal.js";
import type { Services } from "../../services.js";

/** Why `principal` may not use `nodeId`, or undefined when it may. */
export async function nodeIdRefusal(
  svc: Pick<Services, "org" | "accounts">,
  principal: Principal,
  nodeId: string,
): Promise<string | undefined> {
  const id = nodeId.toLowerCase();
  const self = principal.uuid.toLowerCase();
  if (principal.kind === "edge") return id === self ? undefined : "an edge must connect with its own UUID as node_id";
  if (id === "" || id === self || principal.isSuper) return undefined;
  const edge = svc.org.index.edges.get(id);
  if (edge) return edge.owner?.toLowerCase() === self ? undefined : "node_id names an edge this user does not own";
  if (await svc.accounts.findUser(id)) return "node_id names another user";
  return undefined;
}
