// The configuration file's decoding (edge-agent --config): every problem names the file's line and the field,
// secrets are never quoted back, and the shape `agentctl config-file show` prints is accepted as it is.
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { ConfigFileError, parseAgentConfig, referenceIssues } from "../../../runtime/cli/agent-config-file.js";
import { SECRET_MASK } from "../../../runtime/cli/output.js";

const problems = (text: string) => {
  try {
    parseAgentConfig("agent.yaml", text);
  } catch (e) {
    if (e instanceof ConfigFileError) return e.problems;
    throw e;
  }
  throw new Error("accepted");
};

it("names the line and field of unknown sections and fields, and of repeated ids", () => {
  expect(problems("upstreams:\n  - id: rt\n")).toEqual([
    expect.stringMatching(/^agent\.yaml line 1: upstreams: is unexpected/),
  ]);
  expect(problems("upstream:\n  - id: rt\n    qoss: partial\n")).toEqual([
    expect.stringMatching(/^agent\.yaml line 3: upstream\[0\]\.qoss: is unexpected/),
  ]);
  expect(problems("upstream:\n  - id: rt\n  - id: rt\n")).toEqual([
    'agent.yaml line 3: upstream[1].id: "rt" appears twice in upstream',
  ]);
  expect(problems("- just\n- a list\n")).toEqual([
    "agent.yaml line 1: expected a mapping of sections (connection, upstream, ...)",
  ]);
  expect(problems("upstream:\n  - id: rt\n   qos: partial\n")[0]).toMatch(/^agent\.yaml: .* at line 3, column/);
});

it("never quotes a secret back, and keeps the stored one for the mask and for an empty value", () => {
  const secret = "s".repeat(2000);
  const [p] = problems(`connection:\n  client_secret: ${secret}\n`);
  expect(p).toBe("agent.yaml line 2: connection.client_secret: expected a string of 1 to 1024 characters");
  for (const kept of [`"${SECRET_MASK}"`, '""'])
    expect(parseAgentConfig("a.yaml", `connection:\n  client_secret: ${kept}\n`).config.connection).toEqual({});
});

it("finds dest_ids that would name nothing, in the file or among the agent's items the file leaves out", () => {
  const parsed = parseAgentConfig(
    "a.yaml",
    "upstream:\n  - id: rt\ndevice_connectors_upstream:\n  - id: dc\n    format: iscp-v2-compat\n    dest_ids: [rt, deferred, gone]\n",
  );
  const have = { upstream: [], device_connectors_upstream: [], downstream: [], device_connectors_downstream: [] };
  expect(referenceIssues(parsed.config, have).map(parsed.problem)).toEqual([
    'a.yaml line 6: device_connectors_upstream[0].dest_ids[2]: upstream "gone" is not configured',
  ]);
  const only = parseAgentConfig("a.yaml", "transport:\n  protocol: quic\nupstream:\n  - id: rt\n");
  const agent = { ...have, device_connectors_upstream: [{ id: "cam", dest_ids: ["old"] }] };
  expect(referenceIssues(only.config, agent).map(only.problem)).toEqual([
    'a.yaml line 3: upstream: leaves out "old", which device_connectors_upstream "cam" (not in the file) names in dest_ids',
  ]);
});

it("accepts the device guide's example file", () => {
  const guide = fs.readFileSync(path.resolve(import.meta.dirname, "../../../docs/guide/device.md"), "utf8");
  const [example] = [...guide.matchAll(/^```yaml\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
  expect(parseAgentConfig("config.yaml", example!).config.upstream).toEqual([
    expect.objectContaining({ id: "default", qos: "partial" }),
  ]);
});
