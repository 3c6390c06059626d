// A second agent started on a live socket is refused before it touches anything: it must not open
// (or create) the data directory, whose queue recovery would end the running agent's measurement, nor
// start machines that would launch a second copy of the running agent's connectors.
import { stat } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SocketInUseError, closeUnix, listenUnix } from "../../../runtime/api/unix-socket.js";
import { startAgent } from "../../../runtime/daemon.js";
import { fakeOpener } from "../../support/agent-fakes.js";
import { eventually, startTestAgent, tempDir, type TestAgent } from "../../support/agent.js";

const firstIpcs = fakeOpener<{ settings: { id: string } }>();
let t: TestAgent;
beforeAll(async () => {
  t = await startTestAgent({ upstreamIpc: firstIpcs.open });
  await t.api.post("/upstreams", { id: "u" });
  await t.api.post("/device-connectors/upstream", { id: "c", format: "iscp-v2-compat", dest_ids: ["u"] });
  await eventually(() => firstIpcs.calls.length === 1);
});
afterAll(async () => {
  await t.close();
});

describe("claiming the socket", () => {
  it("refuses a live socket before creating the data directory", async () => {
    const other = path.join(t.dir, "other-data");
    await expect(startAgent({ socketPath: t.socketPath, dataDir: other })).rejects.toBeInstanceOf(SocketInUseError);
    await expect(stat(other)).rejects.toThrow(/ENOENT/);
  });

  it("refuses a live socket before starting any machine on the shared data directory", async () => {
    const second = fakeOpener<{ settings: { id: string } }>();
    const started = startAgent({ socketPath: t.socketPath, dataDir: t.dataDir, openers: { upstreamIpc: second.open } });
    await expect(started).rejects.toThrow(/another process is listening/);
    expect(second.calls).toHaveLength(0);
    expect((await t.api.get("/device-connectors/upstream/c")).status).toBe(200); // the running agent is untouched
  });

  it("changes the process umask (for the socket's 0660) only for the synchronous bind, never across an await", async () => {
    // Another task's mkdir running while the umask is 0117 would make a directory without x bits.
    const socketPath = path.join(await tempDir("umask-"), "s.sock");
    const original = process.umask();
    const seen = new Set<number>();
    let done = false;
    const watch = () => {
      seen.add(process.umask());
      if (!done) setImmediate(watch);
    };
    watch();
    const server = await listenUnix((_req, res) => res.end(), socketPath);
    done = true;
    expect([...seen]).toEqual([original]);
    expect((await stat(socketPath)).mode & 0o777).toBe(0o660);
    await closeUnix(server, socketPath);
  });
});
