// `--log-format text`: pino's JSON lines turned into one human-readable line each, for a terminal or a journal
// read by people: `2026-01-02T03:04:05.678Z INFO  edge agent listening socket=/run/edge-agent/agent.sock`.
// A plain destination stream, not a pino transport: no worker thread, and the line is written when pino
// writes it (an exit right after a log line loses nothing). pid and hostname are left out (journald and the
// terminal know them); an error's stack follows its line, indented.

const LEVELS: Record<number, string> = { 10: "TRACE", 20: "DEBUG", 30: "INFO", 40: "WARN", 50: "ERROR", 60: "FATAL" };
const LEFT_OUT = new Set(["level", "time", "msg", "pid", "hostname", "svc"]);

/** One JSON log line as text (a line that is not JSON is passed on as it is). */
export function formatLogLine(json: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json.endsWith("\n") ? json : `${json}\n`;
  }
  const time = typeof entry.time === "number" ? new Date(entry.time).toISOString() : String(entry.time ?? "");
  const level = LEVELS[entry.level as number] ?? String(entry.level);
  const stacks: string[] = [];
  const fields = Object.entries(entry)
    .filter(([k]) => !LEFT_OUT.has(k))
    .map(([k, v]) => {
      const err = v as { message?: unknown; stack?: unknown } | null;
      if (err && typeof err === "object" && typeof err.stack === "string" && typeof err.message === "string") {
        stacks.push(err.stack.replace(/^/gm, "    "));
        return `${k}=${value(err.message)}`;
      }
      return `${k}=${value(v)}`;
    });
  const msg = typeof entry.msg === "string" ? entry.msg : "";
  const head = [time, level.padEnd(5), msg, ...fields].filter((p) => p !== "").join(" ");
  return `${[head, ...stacks].join("\n")}\n`;
}

/** A string bare when it holds no space, quote or `=`; anything else as JSON. */
function value(v: unknown): string {
  if (typeof v === "string" && v !== "" && !/[\s"=]/.test(v)) return v;
  return JSON.stringify(v) ?? String(v);
}

/** A pino destination writing text lines to `out` (standard output by default). */
export function textDestination(out: { write(s: string): unknown } = process.stdout): { write(s: string): void } {
  return { write: (line: string) => void out.write(formatLogLine(line)) };
}
