// Live updates of one measurement: the peer's measurement event stream (NDJSON, one line per
// `measurement_updated`, empty keep-alive lines) read through fetch with the user's token. Each event
// tells the page to fetch the reduced series again; events closer than `minGapMs` are merged.
import { apiFetch } from "./api";

export function followMeasurement(project: string, meas: string, onUpdate: () => void, minGapMs = 500): () => void {
  const abort = new AbortController();
  let timer: number | undefined;
  let last = 0;
  const fire = () => {
    timer = undefined;
    last = Date.now();
    onUpdate();
  };
  const schedule = () => {
    if (timer !== undefined) return;
    timer = window.setTimeout(fire, Math.max(0, last + minGapMs - Date.now()));
  };
  void (async () => {
    // Reconnects after the stream ends (peer restart, token expiry) until the page stops following.
    while (!abort.signal.aborted) {
      try {
        const r = await apiFetch(`/v1/projects/${project}/measurements/events?meas_uuid=${meas}`, {
          signal: abort.signal,
        });
        if (!r.ok || !r.body) throw new Error(String(r.status));
        const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          if (value.trim() !== "") schedule();
        }
      } catch {
        // fall through to the retry below
      }
      if (!abort.signal.aborted) await new Promise((r) => setTimeout(r, 2000));
    }
  })();
  return () => {
    abort.abort();
    clearTimeout(timer);
  };
}
