// The edge agent started as deploy/edge-agent.service starts it, with the unit's system paths mapped to a
// temp dir (/run/edge-agent, /var/lib/edge-agent, /run/intdash), and a real cloud peer with an edge to connect.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { apiClient, ensureDemoCloud, type DemoState } from "../../bin/demo-setup.js";
import { ApiClient } from "../../runtime/cli/client.js";
import { adminToken } from "../cloud/accounts/helpers.js";
import { startTestPeer, type TestPeer } from "../cloud/harness.js";
import { execStart, unitText } from "./unit-file.js";

/** System path in the unit -> where the test puts it. */
export function systemPaths(dir: string): Array<[string, string]> {
  return [
    ["/run/edge-agent", path.join(dir, "run", "edge-agent")],
    ["/var/lib/edge-agent", path.join(dir, "var", "lib", "edge-agent")],
    ["/run/intdash", path.join(dir, "run", "intdash")],
  ];
}

export const mapPaths = (s: string, paths: Array<[string, string]>) =>
  paths.reduce((acc, [from, to]) => acc.replaceAll(from, to), s);

export interface UnitAgent {
  child: ChildProcess;
  api: ApiClient;
  socket: string;
  exited: Promise<number | null>;
}

/**
 * Runs `program` (default: this checkout's bin) with the unit's ExecStart arguments, paths mapped. The
 * intdash FIFO folder is allowed by default at its real path; mapped, it is passed as AGENT_ALLOW_DIRS.
 */
export async function startUnitAgent(
  dir: string,
  o: { program?: string; env?: Record<string, string> } = {},
): Promise<UnitAgent> {
  const paths = systemPaths(dir);
  const args = execStart(unitText("edge-agent")).args.map((a) => mapPaths(a, paths));
  const intdash = mapPaths("/run/intdash", paths);
  fs.mkdirSync(intdash, { recursive: true, mode: 0o750 });
  const program = o.program ?? path.resolve(import.meta.dirname, "../../bin/edge-agent.mjs");
  const env: NodeJS.ProcessEnv = { ...process.env, AGENT_LOG_LEVEL: "warn", ...o.env };
  env.AGENT_ALLOW_DIRS = [intdash, o.env?.AGENT_ALLOW_DIRS].filter(Boolean).join(":");
  const child = spawn(process.execPath, [program, ...args], { env, stdio: ["ignore", "ignore", "inherit"] });
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  const socket = args[args.indexOf("--socket") + 1]!;
  const api = new ApiClient(socket);
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`edge-agent exited with ${child.exitCode}`);
    if ((await api.get("/version").catch(() => undefined))?.status === 200) break;
    if (i > 600) throw new Error("edge-agent did not answer within 60 s");
    await new Promise((r) => setTimeout(r, 100));
  }
  return { child, api, socket, exited };
}

export interface CloudWithEdge {
  peer: TestPeer;
  edge: DemoState;
  /** The project's measurements as the cloud's REST API shows them. */
  measurements(): Promise<
    Array<{ uuid: string; status: string; ended: boolean; completed: boolean; received_data_points: number }>
  >;
}

export async function startCloudWithEdge(dir: string): Promise<CloudWithEdge> {
  fs.mkdirSync(dir, { recursive: true });
  const peer = await startTestPeer({ dataDir: dir });
  const token = await adminToken(peer);
  const edge = await ensureDemoCloud(dir, apiClient(peer.url, token));
  return {
    peer,
    edge,
    async measurements() {
      const r = await fetch(`${peer.url}/api/v1/projects/${edge.projectUuid}/measurements`, {
        headers: { "X-Intdash-Token": token },
      });
      return ((await r.json()) as { items: never[] }).items;
    },
  };
}
