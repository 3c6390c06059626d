// Calls to the peer's REST API with the signed-in user's token; one refresh and retry on a 401.
import { accessToken, refresh } from "./auth";

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    title: string,
  ) {
    super(title);
  }
}

export async function apiFetch(path: string, init: RequestInit = {}, retry = true): Promise<Response> {
  const headers = new Headers(init.headers);
  const token = accessToken();
  if (token) headers.set("authorization", `Bearer ${token}`);
  const r = await fetch(`/api${path}`, { ...init, headers });
  if (r.status === 401 && retry && token) {
    await refresh().catch(() => undefined);
    if (accessToken() && accessToken() !== token) return apiFetch(path, init, false);
  }
  return r;
}

/** JSON in, JSON out; a non-2xx answer becomes an ApiError with the API's {type, title}. */
export async function api<T = any>(path: string, opts: { method?: string; json?: unknown } = {}): Promise<T> {
  const init: RequestInit = { method: opts.method ?? "GET" };
  if (opts.json !== undefined)
    (init.headers = { "content-type": "application/json" }), (init.body = JSON.stringify(opts.json));
  const r = await apiFetch(path, init);
  if (r.status === 204) return undefined as T;
  const body = await r.json().catch(() => ({}));
  if (!r.ok) throw new ApiError(r.status, body.type ?? "error", body.title ?? `the server answered ${r.status}`);
  return body as T;
}

export const q = (params: Record<string, string | number | undefined | readonly string[]>) => {
  const s = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === "") continue;
    if (Array.isArray(v)) for (const x of v) s.append(k, x);
    else s.set(k, String(v));
  }
  const text = s.toString();
  return text ? `?${text}` : "";
};
