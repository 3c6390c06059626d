// The installed edge agent runs from its bundle (dist/bundle/, built by scripts/build.mjs): its own code and its
// pure-JavaScript libraries come from a few files there, not from the ~600 modules of dist/ and node_modules that
// cost most of a start's CPU (and, on a busy device, most of the time without live data after a restart).
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, expect, it } from "vitest";
import { ApiClient } from "../../../runtime/cli/client.js";
import { stopChild } from "../../../runtime/device-bench/children.js";
import { tempDir } from "../../support/agent.js";

const PACKAGE = path.resolve(import.meta.dirname, "../../..");
let started: { child: ChildProcess; dir: string } | undefined;
afterEach(async () => {
  if (!started) return;
  await stopChild(started.child);
  fs.rmSync(started.dir, { recursive: true, force: true });
  started = undefined;
});

/** Module hooks (for `--import`) that write the URL of every ES module the process loads into `log`. */
function loadRecorder(dir: string, log: string): string {
  fs.writeFileSync(
    path.join(dir, "hooks.mjs"),
    `import fs from "node:fs";
export async function load(url, context, next) {
  if (url.startsWith("file:")) fs.appendFileSync(${JSON.stringify(log)}, url + "\\n");
  return next(url, context);
}
`,
  );
  const register = path.join(dir, "register.mjs");
  fs.writeFileSync(register, `import { register } from "node:module";\nregister("./hooks.mjs", import.meta.url);\n`);
  return register;
}

it("edge-agent loads its own code and its pure-JavaScript libraries from its bundle", async () => {
  const dir = await tempDir("bundle-");
  const log = path.join(dir, "loaded.txt");
  const socket = path.join(dir, "agent.sock");
  const args = ["--import", loadRecorder(dir, log), path.join(PACKAGE, "bin/edge-agent.mjs"), "--socket", socket];
  const child = spawn(process.execPath, [...args, "--data", path.join(dir, "data")], {
    stdio: ["ignore", "ignore", "inherit"],
  });
  started = { child, dir };
  const api = new ApiClient(socket);
  // GET /connection is answered once the whole agent is open (the data path, the machines, the command API).
  let status: number | undefined;
  while ((status = (await api.get("/connection").catch(() => undefined))?.status) !== 200) {
    expect(child.exitCode, `the agent exited; last answer ${status}`).toBeNull();
    await new Promise((r) => setTimeout(r, 20));
  }

  const loaded = fs.readFileSync(log, "utf8").trim().split("\n");
  const under = (p: string) => loaded.filter((u) => u.startsWith(`${pathToFileURL(path.join(PACKAGE, p)).href}/`));
  expect(under("dist").length).toBeGreaterThan(0);
  expect(under("dist").filter((u) => !u.includes("/dist/bundle/"))).toEqual([]);
  for (const library of ["effect", "xstate", "koa", "ws", "protobufjs"])
    expect(under(`node_modules/${library}`), library).toEqual([]);
}, 120_000);
