// The request examples in docs/agent-api.md are accepted by the API as written (channels run on fake
// openers, so the examples' FIFO paths and commands are not touched).
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeOpener } from "../../support/agent-fakes.js";
import { startTestAgent, type TestAgent } from "../../support/agent.js";

/** `METHOD /api/v1/path` followed by a JSON body, from the ```json blocks of the document. */
function examples(markdown: string): { method: string; path: string; body: unknown }[] {
  const blocks = [...markdown.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => m[1]!);
  const out: { method: string; path: string; body: unknown }[] = [];
  for (const block of blocks) {
    const parts = block.split(/^(GET|POST|PATCH|DELETE) \/api\/v1(\S+)\n/m).slice(1);
    for (let i = 0; i < parts.length; i += 3)
      out.push({ method: parts[i]!, path: parts[i + 1]!, body: JSON.parse(parts[i + 2]!) });
  }
  return out;
}

let t: TestAgent;
beforeAll(async () => {
  // As the examples' agent: its socket in /var/run/edge-agent (so its IPC folder there) and --allow-dir /opt/can-connector.
  t = await startTestAgent({ upstreamIpc: fakeOpener().open, downstreamIpc: fakeOpener().open }, [
    "/var/run/edge-agent/ipc",
    "/opt/can-connector",
  ]);
});
afterAll(async () => {
  await t.close();
});

describe("docs/agent-api.md examples", () => {
  it("are all accepted", async () => {
    const found = examples(readFileSync("docs/agent-api.md", "utf8"));
    expect(found.length).toBeGreaterThanOrEqual(4);
    expect((await t.api.post("/upstreams", { id: "default" })).status).toBe(201); // named by the examples' dest_ids
    for (const ex of found) {
      const r = await t.api.request(ex.method, ex.path, ex.body);
      expect(r.status, `${ex.method} ${ex.path}: ${JSON.stringify(r.body)}`).toBeLessThan(300);
    }
  });
});
