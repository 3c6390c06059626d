// --log-format text: pino's JSON records as one readable line each, errors with their stack below.
import pino from "pino";
import { expect, it } from "vitest";
import { formatLogLine, textDestination } from "../../lib/log-text.js";

it("writes time, level, message and fields, leaving out pid, hostname and svc", () => {
  const out: string[] = [];
  const log = pino({ base: { svc: "edge-agent" } }, textDestination({ write: (s) => out.push(s) }));
  log.info({ socket: "/run/edge-agent/agent.sock", dirs: ["/a", "/b"], note: "two words" }, "edge agent listening");
  log.warn("quiet");
  expect(out[0]).toMatch(
    /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z INFO {2}edge agent listening socket=\/run\/edge-agent\/agent\.sock dirs=\["\/a","\/b"\] note="two words"\n$/,
  );
  expect(out[1]).toMatch(/Z WARN {2}quiet\n$/);
});

it("puts an error's message on the line and its stack below, indented", () => {
  const out: string[] = [];
  const log = pino({}, textDestination({ write: (s) => out.push(s) }));
  log.error({ err: new Error("disk full") }, "cannot store");
  const [line, ...stack] = out[0]!.trimEnd().split("\n");
  expect(line).toMatch(/Z ERROR cannot store err="disk full"$/);
  expect(stack[0]).toBe("    Error: disk full");
  expect(stack.length).toBeGreaterThan(1);
});

it("passes on a line that is not JSON as it is", () => {
  expect(formatLogLine("not json")).toBe("not json\n");
});
