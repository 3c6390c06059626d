// Small hooks shared by the pages: the hash route, and data loading with reload and polling.
import { useCallback, useEffect, useRef, useState } from "preact/hooks";

/** The route is the hash: `#/measurements?project=…`. Path parts and query, decoded. */
export function parseRoute(hash: string): { parts: string[]; query: URLSearchParams } {
  const [path = "", query = ""] = hash.replace(/^#/, "").split("?");
  return { parts: path.split("/").filter(Boolean).map(decodeURIComponent), query: new URLSearchParams(query) };
}

export function useRoute() {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const on = () => setHash(location.hash);
    addEventListener("hashchange", on);
    return () => removeEventListener("hashchange", on);
  }, []);
  return parseRoute(hash);
}

export const go = (hash: string) => void (location.hash = hash);

export interface Loaded<T> {
  data: T | undefined;
  error: Error | undefined;
  loading: boolean;
  reload(): void;
}

/**
 * Runs `load` when `deps` change (and every `pollMs` while `poll` says so); keeps the last data while
 * reloading. One load at a time: a reload asked for meanwhile runs once the current one ends, so a
 * slow server still shows progress instead of every answer being superseded before it lands.
 */
export function useLoad<T>(
  load: () => Promise<T>,
  deps: unknown[],
  opts: { pollMs?: number; poll?: (d: T | undefined) => boolean } = {},
): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: Error; loading: boolean }>({ loading: true });
  const loadRef = useRef(load);
  loadRef.current = load;
  const flight = useRef({ busy: false, again: false, alive: true });
  useEffect(() => () => void (flight.current.alive = false), []);
  const run = useCallback(() => {
    const f = flight.current;
    if (f.busy) return void (f.again = true);
    f.busy = true;
    setState((s) => ({ ...s, loading: true }));
    loadRef
      .current()
      .then(
        (data) => f.alive && setState({ data, loading: false }),
        (error: Error) => f.alive && setState((s) => ({ data: s.data, error, loading: false })),
      )
      .finally(() => {
        f.busy = false;
        if (f.again && f.alive) {
          f.again = false;
          run();
        }
      });
  }, []);
  useEffect(run, deps);
  const polling = opts.pollMs !== undefined && (opts.poll?.(state.data) ?? true);
  useEffect(() => {
    if (!polling) return;
    const t = setInterval(run, opts.pollMs);
    return () => clearInterval(t);
  }, [polling, run]);
  return { data: state.data, error: state.error, loading: state.loading, reload: run };
}
