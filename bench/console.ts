// `npm run bench -- console` (or: npx tsx bench/console.ts): a recorded 1,000,000-point float64 series
// opened in the web console in Chromium. Measures the reduced-series request on its own, and the time
// from opening the measurement's page until the plot has drawn the series. Printed, not asserted; the
// target is under a second to draw.
import { execFileSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { chromium } from "playwright-core";
import { pb } from "../proto/gen/pb.js";
import { loadConfig } from "../cloud/config.js";
import { startCloudPeer } from "../cloud/server.js";
import { isMain, report, type Row } from "./lib.js";

const ROOT = path.resolve(import.meta.dirname, "..");
const POINTS = 1_000_000;
const PER_CHUNK = 10_000;
const PASSWORD = "Bench-password-1";
const PROJECT = "00000000-0000-0000-0000-000000000000";
const ms = (t0: bigint) => +(Number(process.hrtime.bigint() - t0) / 1e6).toFixed(1);

/** One sequence of 1,000,000 points, 1 ms apart: a sine with noise, in chunks of PER_CHUNK. */
async function record(base: string, token: string): Promise<string> {
  const auth = { authorization: `Bearer ${token}` };
  const m = await (
    await fetch(`${base}/api/v1/measurements`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({
        basetime: new Date().toISOString(),
        basetime_type: "edge_rtc",
        edge_uuid: crypto.randomUUID(),
        protected: false,
      }),
    })
  ).json();
  const seq = crypto.randomUUID();
  for (let first = 0; first < POINTS; first += PER_CHUNK * 2) {
    const chunks: pb.IStoreDataChunk[] = [];
    for (let c = first; c < Math.min(POINTS, first + PER_CHUNK * 2); c += PER_CHUNK) {
      const dataPoints = Array.from({ length: PER_CHUNK }, (_, i) => {
        const payload = Buffer.alloc(8);
        payload.writeDoubleBE(Math.sin((c + i) / 5000) + Math.random() * 0.1);
        return { elapsedTime: (c + i) * 1_000_000, payload };
      });
      chunks.push({
        sequenceNumber: c / PER_CHUNK + 1,
        dataPointGroups: [{ dataId: { name: "bench/sine", type: "float64" }, dataPoints }],
      });
    }
    const body = Buffer.from(pb.StoreDataChunks.encode({ measUuid: m.uuid, sequenceUuid: seq, chunks }).finish());
    const r = await fetch(`${base}/api/v1/measurements/sequences/chunks`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/vnd.iscp.v2.protobuf" },
      body,
    });
    if (r.status !== 200) throw new Error(`upload: ${r.status} ${await r.text()}`);
  }
  // Ended and complete, as a recorded measurement is (a running one would be followed live).
  for (const step of ["end", "complete"])
    await fetch(`${base}/api/v1/measurements/${m.uuid}/${step}`, { method: "PUT", headers: auth });
  return m.uuid;
}

export async function run(): Promise<Row[]> {
  execFileSync(process.execPath, [path.join(ROOT, "scripts/build.mjs"), "--quiet"], { stdio: "inherit" });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-console-"));
  const peer = await startCloudPeer(
    loadConfig(
      { listen: "127.0.0.1:0", dataDir: path.join(dir, "cloud"), logLevel: "silent", adminPassword: PASSWORD },
      {},
    ),
  );
  const profile = path.join(dir, "chromium");
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: "/usr/bin/chromium",
    headless: true,
    viewport: { width: 1280, height: 900 },
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  try {
    const tokenRes = await fetch(`${peer.url}/api/auth/oauth2/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "password", username: "admin", password: PASSWORD }),
    });
    const token = ((await tokenRes.json()) as { access_token: string }).access_token;
    let t0 = process.hrtime.bigint();
    const meas = await record(peer.url, token);
    const uploadMs = ms(t0);
    const seriesUrl = `${peer.url}/api/v1/projects/${PROJECT}/measurements/${meas}/series?data_type=float64&data_id=bench/sine&buckets=1280`;
    const seriesMs: number[] = [];
    for (let i = 0; i < 3; i++) {
      t0 = process.hrtime.bigint();
      const r = (await (await fetch(seriesUrl, { headers: { authorization: `Bearer ${token}` } })).json()) as {
        point_count: number;
      };
      if (r.point_count !== POINTS) throw new Error(`the series holds ${r.point_count} points`);
      seriesMs.push(ms(t0));
    }

    const page = await context.newPage();
    await page.goto(`${peer.url}/console/`);
    await page.waitForURL(/\/api\/auth\/oauth2\/sign-in/);
    await page.getByLabel("User name").fill("admin");
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForSelector("[data-testid=who]:has-text('admin')");
    const drawMs: number[] = [];
    for (let i = 0; i < 3; i++) {
      await page.goto(`${peer.url}/console/#/measurements`);
      await page.waitForSelector("table[aria-label=Measurements]");
      t0 = process.hrtime.bigint();
      await page.goto(`${peer.url}/console/#/measurement/${PROJECT}/${meas}`);
      await page.waitForSelector(`[data-testid=plot][data-points="${POINTS}"] canvas`, { timeout: 60_000 });
      // The first frame after uPlot drew the data.
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => r(undefined))));
      drawMs.push(ms(t0));
    }
    const median = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!;
    return [
      { what: `upload ${POINTS} float64 points (REST, protobuf)`, ms: uploadMs },
      { what: "reduced series, 1280 buckets (server, median of 3)", ms: median(seriesMs) },
      { what: "open the measurement page until the plot is drawn (median of 3)", ms: median(drawMs), targetMs: 1000 },
    ];
  } finally {
    await context.close().catch(() => undefined);
    await peer.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (isMain(import.meta.url)) console.log(`results: ${report("console", await run())}`);
