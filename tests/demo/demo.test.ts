// `npm start` as a user runs it (the compiled demo): a child process on a fresh data directory prints where
// to look; the printed data-point URL serves the sample connector's points, the printed agentctl command
// shows the states, no process runs TypeScript through tsx, and Ctrl-C (SIGINT) stops everything with exit code 0.
import { execFile, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, expect, it } from "vitest";
import { startDemo } from "../support/demo.js";
import { freePort } from "../support/nats.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "demo-"));
let demo: ChildProcess | undefined;

afterAll(async () => {
  if (demo && demo.exitCode === null && demo.signalCode === null) {
    demo.kill("SIGKILL");
    await new Promise((r) => demo!.once("exit", r));
  }
  // A demo killed (the test failed before its Ctrl-C) leaves its agent, connector and cloud running: each by PID.
  const left = await promisify(execFile)("pgrep", ["-f", dir]).then(
    (r) => r.stdout.split("\n").filter(Boolean).map(Number),
    () => [] as number[],
  );
  for (const pid of left) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone meanwhile
    }
  }
  fs.rmSync(dir, { recursive: true, force: true });
});

it("runs the cloud, the agent and a connector, prints working pointers, and stops on Ctrl-C", async () => {
  const port = await freePort();
  const started = await startDemo(dir, port);
  demo = started.child;
  const out = started.output;

  // Nothing (no log line) before the banner; the console comes first, with the admin's user name and where its
  // password is; it serves the page.
  expect(out().slice(0, out().indexOf("Demo running")).trim()).toBe("");
  const first = out()
    .split("\n")
    .find((l) => /^\s+\S/.test(l));
  expect(first).toMatch(
    new RegExp(
      `^\\s+console\\s+http://127\\.0\\.0\\.1:${port}/console/\\s+\\(sign in as "admin", password in \\S*admin-password\\)$`,
    ),
  );
  const page = await fetch(`http://127.0.0.1:${port}/console/`);
  expect(page.status).toBe(200);
  expect(await page.text()).toContain('<div id="app">');

  // The vehicle's run: a console link to the measurement, named.
  const run = new RegExp(
    `the vehicle's run\\s+http://127\\.0\\.0\\.1:${port}/console/#/measurement/([0-9a-f-]{36})/([0-9a-f-]{36})\\s+\\("(Test track run [^"]+)"\\)`,
  ).exec(out());
  expect(run, out()).not.toBeNull();

  // The data-point URL names the running measurement; with the printed token it serves the vehicle's points:
  // numbers, a position, a CAN frame.
  const url = /data points\s+curl .* '(http[^']+)'/.exec(out())?.[1];
  expect(url).toMatch(
    new RegExp(`^http://127\\.0\\.0\\.1:${port}/api/v1/projects/[0-9a-f-]{36}/data\\?name=[0-9a-f-]{36}$`),
  );
  const token = fs.readFileSync(path.join(dir, "admin-token"), "utf8").trim();
  const names = async () =>
    new Set(
      (await (await fetch(url!, { headers: { "X-Intdash-Token": token } })).text())
        .split("\n")
        .map((l) => /"data_id":"([^"]+)"/.exec(l)?.[1]),
    );
  for (const name of ["vehicle/speed", "gnss/position", "imu/acc_x", "can/0x1A0", "engine/coolant_temp"])
    await expect.poll(async () => (await names()).has(name), { timeout: 30_000, interval: 500 }).toBe(true);
  expect(url).toContain(run![2]!);
  const measurement = await (
    await fetch(`http://127.0.0.1:${port}/api/v1/projects/${run![1]}/measurements/${run![2]}`, {
      headers: { "X-Intdash-Token": token },
    })
  ).json();
  expect(measurement.name).toBe(run![3]);
  // No secret on the console.
  expect(out()).not.toContain(token);

  // The printed agentctl command works and shows the upstream streaming.
  const cmd = /agent state\s+npx agentctl --socket (\S+) state/.exec(out())?.[1];
  expect(cmd).toBeDefined();
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ["bin/agentctl.mjs", "--socket", cmd!, "state", "upstream"],
    { cwd: ROOT },
  );
  expect(stdout).toMatch(/demo\s+.*(connected|quiet)/);
  // The agent and the sample connector it launched run compiled JavaScript, without a TypeScript loader.
  const running = (await promisify(execFile)("pgrep", ["-af", dir])).stdout;
  expect(running).toContain("sample-connector.js");
  expect(running).not.toContain("tsx");

  const exited = new Promise<number | null>((r) => demo!.once("exit", (code) => r(code)));
  demo.kill("SIGINT");
  expect(await exited).toBe(0);
  expect(fs.existsSync(path.join(dir, "agent", "agent.sock"))).toBe(false);
  // Nothing left running on the demo's data (the agent and the sample connector both ended).
  const left = await promisify(execFile)("pgrep", ["-f", dir]).then(
    (r) => r.stdout.trim(),
    () => "",
  );
  expect(left).toBe("");
}, 120_000);

it("names the address and CLOUD_LISTEN when the port is taken", async () => {
  const busy = net.createServer();
  await new Promise<void>((r) => busy.listen(0, "127.0.0.1", r));
  const port = (busy.address() as net.AddressInfo).port;
  const other = fs.mkdtempSync(path.join(os.tmpdir(), "demo-busy-"));
  try {
    const r = await promisify(execFile)(process.execPath, ["dist/bin/demo.js"], {
      cwd: ROOT,
      env: { ...process.env, DEMO_DATA: other, CLOUD_LISTEN: `127.0.0.1:${port}` },
      timeout: 60_000,
    }).then(
      () => ({ code: 0, stderr: "" }),
      (e: { code: number; stderr: string }) => e,
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`127.0.0.1:${port} is in use`);
    expect(r.stderr).toContain("CLOUD_LISTEN=");
  } finally {
    await new Promise((r) => busy.close(r));
    fs.rmSync(other, { recursive: true, force: true });
  }
}, 120_000);
