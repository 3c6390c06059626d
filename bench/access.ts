// Access decisions per second for 1,000 users, 100 groups (10 top-level with 9 sub-groups each),
// 1,000 projects and 10,000 memberships: in-process through svc.org.decide (memoised, and with
// the memo defeated on every call) and over HTTP through POST /api/auth/authorize/http (server in
// a child process, autocannon from this one).
import { spawn, type ChildProcess } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { isMain, report, type Row } from "./lib.js";
import type { CloudPeer } from "../cloud/server.js";
import type { DecisionInput } from "../cloud/access/service/engine.js";

const N = { users: 1000, topGroups: 10, subGroupsPerTop: 9, projectsPerGroup: 10, projectMembershipsPerUser: 9 };
const MEMBER_SCOPES = [
  "me:a",
  "users:r",
  "roles:r",
  "edges:r",
  "edges:w",
  "groups:r",
  "projects:r",
  "measurements:r",
  "measurements:w",
  "iscp:r",
  "iscp:w",
];
const IN_PROCESS_MS = Number(process.env.BENCH_ACCESS_MS ?? 2000);
const HTTP_S = Number(process.env.BENCH_ACCESS_HTTP_SECONDS ?? 5);

interface Dataset {
  users: string[];
  groups: string[];
  projects: string[];
  memberships: number;
  queries: DecisionInput[];
}

/** Seeds the data set straight through the repositories (one transaction), then reloads the index. */
async function seed(peer: CloudPeer): Promise<Dataset> {
  const { UsersRepo } = await import("../cloud/accounts/repo/users.js");
  const { ROLE_UUIDS } = await import("../cloud/accounts/service/catalogue.js");
  const { GroupRepo, ProjectRepo } = await import("../cloud/org/repo/groups.js");
  const { MemberRepo } = await import("../cloud/org/repo/members.js");
  let rnd = 42;
  // LCG; its low bits repeat with short periods, so take the high ones.
  const rand = (n: number) => ((rnd = (rnd * 1103515245 + 12345) & 0x7fffffff), (rnd >>> 8) % n);
  const at = new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
  const users = Array.from({ length: N.users }, () => crypto.randomUUID());
  const groups: string[] = [];
  const projects: string[] = [];
  const groupOfProject = new Map<string, string>();
  let memberships = 0;
  const roles = [ROLE_UUIDS.member, ROLE_UUIDS.readOnly];
  const userProjects = new Map<string, string[]>();
  await peer.svc.db.transaction(async (tx) => {
    const u = new UsersRepo(tx);
    for (const [i, uuid] of users.entries()) {
      await u.insert({
        uuid,
        tenant_uuid: peer.svc.accounts.tenantUuid,
        name: `bench-${i}`,
        nickname: "",
        description: "",
        disabled: 0,
        last_sign_in_at: null,
        created_at: at,
        updated_at: at,
      });
      await u.assignRole(uuid, ROLE_UUIDS.member, at);
    }
    const g = new GroupRepo(tx);
    const p = new ProjectRepo(tx);
    for (let t = 0; t < N.topGroups; t++) {
      const top = crypto.randomUUID();
      await g.insert({ uuid: top, parent_uuid: null, name: `top-${t}`, created_at: at, updated_at: at });
      groups.push(top);
      for (let s = 0; s < N.subGroupsPerTop; s++) {
        const sub = crypto.randomUUID();
        await g.insert({ uuid: sub, parent_uuid: top, name: `sub-${s}`, created_at: at, updated_at: at });
        groups.push(sub);
      }
    }
    for (const group of groups)
      for (let i = 0; i < N.projectsPerGroup; i++) {
        const uuid = crypto.randomUUID();
        await p.insert({ uuid, group_uuid: group, name: `project-${i}`, created_at: at, updated_at: at });
        projects.push(uuid);
        groupOfProject.set(uuid, group);
      }
    const gm = new MemberRepo(tx, "group_members", "group_uuid");
    const pm = new MemberRepo(tx, "project_members", "project_uuid");
    for (const user of users) {
      await gm.upsert({
        scope_uuid: groups[rand(groups.length)]!,
        user_uuid: user,
        role_uuids: [roles[rand(2)]!],
        is_owner: rand(10) === 0,
        created_at: at,
        updated_at: at,
      });
      memberships++;
      const mine = new Set<string>();
      while (mine.size < N.projectMembershipsPerUser) mine.add(projects[rand(projects.length)]!);
      for (const project of mine) {
        await pm.upsert({
          scope_uuid: project,
          user_uuid: user,
          role_uuids: [roles[rand(2)]!],
          is_owner: rand(10) === 0,
          created_at: at,
          updated_at: at,
        });
        memberships++;
      }
      userProjects.set(user, [...mine]);
    }
  });
  await peer.svc.org.index.load(peer.svc.db);
  // Queries: half inside the subject's own projects, half anywhere (mostly refused); a mix of paths.
  const queries: DecisionInput[] = [];
  for (let i = 0; i < 20_000; i++) {
    const user = users[rand(users.length)]!;
    const project = rand(2)
      ? userProjects.get(user)![rand(N.projectMembershipsPerUser)]!
      : projects[rand(projects.length)]!;
    const subject = { kind: "user" as const, uuid: user };
    const kind = rand(4);
    if (kind === 0)
      queries.push({ subject, scopes: MEMBER_SCOPES, method: "GET", path: `/auth/projects/${project}/members` });
    else if (kind === 1)
      queries.push({ subject, scopes: MEMBER_SCOPES, method: "POST", path: `/v1/projects/${project}/measurements` });
    else if (kind === 2)
      queries.push({
        subject,
        scopes: MEMBER_SCOPES,
        method: "GET",
        path: `/auth/groups/${groupOfProject.get(project)}/members`,
      });
    else queries.push({ subject, scopes: MEMBER_SCOPES, method: "GET", path: "/auth/users" });
  }
  return { users, groups, projects, memberships, queries };
}

function timeLoop(ms: number, step: (i: number) => boolean): { rate: number; allowed: number } {
  let n = 0;
  let allowed = 0;
  const end = performance.now() + ms;
  let t = performance.now();
  while (t < end) {
    for (let k = 0; k < 1000; k++, n++) if (step(n)) allowed++;
    t = performance.now();
  }
  return { rate: Math.round(n / (ms / 1000 + (t - end) / 1000)), allowed: allowed / n };
}

async function startPeer(): Promise<{ peer: CloudPeer; dataDir: string }> {
  const { loadConfig } = await import("../cloud/config.js");
  const { startCloudPeer } = await import("../cloud/server.js");
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-access-"));
  const config = loadConfig(
    { listen: "127.0.0.1:0", dataDir, logLevel: "silent", adminPassword: "Admin-password-1" },
    {},
  );
  return { peer: await startCloudPeer(config), dataDir };
}

async function inProcess(): Promise<Row[]> {
  const { peer, dataDir } = await startPeer();
  try {
    const started = performance.now();
    const data = await seed(peer);
    const seedMs = Math.round(performance.now() - started);
    const { OrgIndex } = await import("../cloud/org/service/org-index.js");
    const loadStart = performance.now();
    await new OrgIndex().load(peer.svc.db);
    const loadMs = Math.round(performance.now() - loadStart);
    const org = peer.svc.org;
    const q = data.queries;
    timeLoop(300, (i) => org.decide(q[i % q.length]!)); // warm-up
    const memo = timeLoop(IN_PROCESS_MS, (i) => org.decide(q[i % q.length]!));
    // Defeat the per-(subject, project) memo: every decision walks the index again.
    const cold = timeLoop(IN_PROCESS_MS, (i) => {
      org.index.epoch++;
      return org.decide(q[i % q.length]!);
    });
    const scopesOnly = q.map((x) => ({ scopes: x.scopes, method: x.method, path: x.path }));
    const plain = timeLoop(IN_PROCESS_MS, (i) => org.decide(scopesOnly[i % scopesOnly.length]!));
    const shape = `${data.users.length} users, ${data.groups.length} groups, ${data.projects.length} projects, ${data.memberships} memberships`;
    return [
      { mode: "in-process, memoised", "checks/s": memo.rate, "allowed %": Math.round(memo.allowed * 100), note: shape },
      {
        mode: "in-process, memo defeated",
        "checks/s": cold.rate,
        "allowed %": Math.round(cold.allowed * 100),
        note: "index walk + role-set lookup each call",
      },
      {
        mode: "in-process, scopes only",
        "checks/s": plain.rate,
        "allowed %": Math.round(plain.allowed * 100),
        note: "no subject",
      },
      {
        mode: "index load from SQLite",
        "checks/s": null,
        "allowed %": null,
        note: `${loadMs} ms (seeding took ${seedMs} ms)`,
      },
    ];
  } finally {
    await peer.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Serve mode (child process): seed, then print the URL, an admin API token and sample bodies. */
async function serve(): Promise<void> {
  const { peer, dataDir } = await startPeer();
  process.on("exit", () => fs.rmSync(dataDir, { recursive: true, force: true }));
  const data = await seed(peer);
  const { createToken } = await import("../cloud/accounts/service/tokens.js");
  const admin = (await peer.svc.accounts.findUserByName("admin"))!;
  const token = (await createToken(peer.svc, admin.uuid, { name: "bench" })).token!;
  const bodies = data.queries
    .slice(0, 1000)
    .map((x) => JSON.stringify({ subject: x.subject!.uuid, scopes: x.scopes, method: x.method, path: x.path }));
  process.stdout.write(`TARGET ${JSON.stringify({ url: `${peer.url}/api/auth/authorize/http`, token, bodies })}\n`);
  process.once("SIGTERM", () => void peer.close().then(() => process.exit(0)));
}

function startChild(): Promise<{ child: ChildProcess; target: { url: string; token: string; bodies: string[] } }> {
  const child = spawn(process.execPath, ["--import", "tsx", fileURLToPath(import.meta.url), "--serve"], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    readline.createInterface({ input: child.stdout! }).on("line", (line) => {
      if (line.startsWith("TARGET ")) resolve({ child, target: JSON.parse(line.slice(7)) });
    });
    child.once("exit", (code) => reject(new Error(`server exited with ${code}`)));
  });
}

async function overHttp(): Promise<Row[]> {
  const { child, target } = await startChild();
  try {
    const headers = { "content-type": "application/json", "x-intdash-token": target.token };
    const probe = await fetch(target.url, { method: "POST", headers, body: target.bodies[0] });
    if (probe.status !== 200) throw new Error(`check access answered ${probe.status}: ${await probe.text()}`);
    const opts = {
      url: target.url,
      method: "POST" as const,
      connections: 32,
      headers,
      requests: target.bodies.map((body) => ({ body })),
    };
    await autocannon({ ...opts, duration: 1 });
    const r = await autocannon({ ...opts, duration: HTTP_S });
    return [
      {
        mode: "HTTP POST /api/auth/authorize/http (API token, 32 connections)",
        "checks/s": Math.round(r.requests.average),
        "allowed %": null,
        note: `p99 ${r.latency.p99} ms, non-2xx ${r.non2xx}, errors ${r.errors}`,
      },
    ];
  } finally {
    child.kill("SIGTERM");
  }
}

export async function run(): Promise<Row[]> {
  return [...(await inProcess()), ...(await overHttp())];
}

if (process.argv[2] === "--serve") await serve();
else if (isMain(import.meta.url)) report("access", await run());
