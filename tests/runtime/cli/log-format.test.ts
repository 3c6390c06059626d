// `--log-format text` as an operator sees it: the edge-agent command and the cloud peer write readable lines
// instead of JSON, and refuse a format they do not know.
import path from "node:path";
import { Writable } from "node:stream";
import { expect, it } from "vitest";
import { eventually } from "../../support/agent.js";
import { agentProcesses } from "../../support/agent-process.js";
import { startTestPeer } from "../../cloud/harness.js";

const agents = agentProcesses();

it("edge-agent --log-format text (and AGENT_LOG_FORMAT) logs readable lines", async () => {
  const dir = await agents.dir("agent-logs-");
  const socket = path.join(dir, "agent.sock");
  const a = agents.spawn(["--socket", socket, "--data", path.join(dir, "data"), "--log-format", "text"]);
  const line = await eventually(
    () =>
      a
        .stdout()
        .split("\n")
        .find((l) => l.includes("edge agent listening")),
    60_000,
  );
  expect(line).toMatch(
    new RegExp(`^\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z INFO {2}edge agent listening socket=${socket.replace(/[.]/g, "\\.")} `),
  );
  expect(a.stdout()).not.toContain("{");

  const bad = agents.spawn(["--socket", path.join(dir, "b.sock")], { AGENT_LOG_FORMAT: "xml" });
  expect(await bad.exited).toBe(2);
  expect(bad.stderr()).toContain('edge-agent: AGENT_LOG_FORMAT "xml": expected json or text\n');
}, 90_000);

it("cloud-peer with logFormat text (--log-format, CLOUD_LOG_FORMAT) logs readable lines", async () => {
  let text = "";
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      text += chunk.toString();
      done();
    },
  });
  const peer = await startTestPeer({ config: { logLevel: "info", logFormat: "text" }, logDestination: sink });
  try {
    await fetch(`${peer.url}/api/version`);
    await eventually(() => text.includes("\n"), 30_000);
    for (const line of text.trimEnd().split("\n"))
      expect(line).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z (TRACE|DEBUG|INFO |WARN |ERROR|FATAL) |^ {4}/);
  } finally {
    await peer.stop();
  }
}, 120_000);
