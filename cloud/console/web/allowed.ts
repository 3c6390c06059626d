// Whether the signed-in user may make a call, asked of the peer (intdash REST API: checkMeHTTPAuthorization),
// so a page leaves out controls the user's roles do not allow. The server still guards every call.
import { api } from "./api";
import { useLoad } from "./hooks";

/** undefined while the peer is being asked; false also when it cannot be asked. */
export function useAllowed(method: "POST" | "PUT" | "PATCH" | "DELETE", path: string): boolean | undefined {
  const r = useLoad(
    () => api<{ result: boolean }>("/auth/users/me/authorize/http", { method: "POST", json: { method, path } }),
    [method, path],
  );
  return r.data ? r.data.result : r.error ? false : undefined;
}
