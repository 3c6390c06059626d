// `npm run bench -- console` (or: npx tsx bench/console.ts): the web console in Chromium.
// - recorded: a 1-hour measurement of 10 float64 series at 100 Hz (3,600,000 points), uploaded over REST; the
//   reduced series of one of them on the server, and the time from opening the measurement's page until its plot
//   has drawn every plotted series (target: under 2 s);
// - live: 10 series at 1,000 points/s each through an edge agent's FIFO, from the write to the pixel (target:
//   under 1 s; bench/console-live.ts).
// Printed, not asserted, with the machine's load average (the figures mean little on a loaded machine).
import { execFileSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Page } from "playwright-core";
import { pb } from "../proto/gen/pb.js";
import { loadConfig } from "../cloud/config.js";
import { startCloudPeer } from "../cloud/server.js";
import { launchChromium } from "../tests/support/browser.js";
import { ADMIN_PASSWORD } from "../tests/cloud/oauth/helpers.js";
import { liveLatency } from "./console-live.js";
import { arg, isMain, report, type Row } from "./lib.js";

const ROOT = path.resolve(import.meta.dirname, "..");
const SERIES = 10;
const HZ = 100;
/** The recorded measurement's length: an hour (`--seconds N` for a shorter try). */
const SECONDS = Number(arg("seconds") ?? 3600);
const PER_SERIES = HZ * SECONDS;
/** Points of each series in one chunk; two chunks (20,000 points, about 460 KB) per request, under the body limit. */
const PER_CHUNK = 1000;
const PASSWORD = "Bench-password-1";
const PROJECT = "00000000-0000-0000-0000-000000000000";
const ms = (t0: bigint) => +(Number(process.hrtime.bigint() - t0) / 1e6).toFixed(1);
const median = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!;
const seriesName = (i: number) => `bench/s${String(i).padStart(2, "0")}`;

/** One hour of SERIES sines with noise at HZ, in one sequence; ended and complete, as a recorded measurement is. */
async function record(base: string, token: string): Promise<string> {
  const auth = { authorization: `Bearer ${token}` };
  const m = await (
    await fetch(`${base}/api/v1/measurements`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({
        basetime: new Date(Date.now() - SECONDS * 1000).toISOString(),
        basetime_type: "edge_rtc",
        edge_uuid: crypto.randomUUID(),
        protected: false,
      }),
    })
  ).json();
  const seq = crypto.randomUUID();
  const step = 1_000_000_000 / HZ;
  for (let first = 0; first < PER_SERIES; first += PER_CHUNK * 2) {
    const chunks: pb.IStoreDataChunk[] = [];
    for (let c = first; c < Math.min(PER_SERIES, first + PER_CHUNK * 2); c += PER_CHUNK)
      chunks.push({
        sequenceNumber: c / PER_CHUNK + 1,
        dataPointGroups: Array.from({ length: SERIES }, (_, s) => ({
          dataId: { name: seriesName(s), type: "float64" },
          dataPoints: Array.from({ length: PER_CHUNK }, (_, i) => {
            const payload = Buffer.alloc(8);
            payload.writeDoubleBE(Math.sin((c + i) / (500 + 100 * s)) * (s + 1) + Math.random() * 0.1);
            return { elapsedTime: (c + i) * step, payload };
          }),
        })),
      });
    const body = Buffer.from(pb.StoreDataChunks.encode({ measUuid: m.uuid, sequenceUuid: seq, chunks }).finish());
    const r = await fetch(`${base}/api/v1/measurements/sequences/chunks`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/vnd.iscp.v2.protobuf" },
      body,
    });
    if (r.status !== 200) throw new Error(`upload: ${r.status} ${await r.text()}`);
  }
  for (const step of ["end", "complete"])
    await fetch(`${base}/api/v1/measurements/${m.uuid}/${step}`, { method: "PUT", headers: auth });
  return m.uuid;
}

async function signIn(page: Page, url: string, password = PASSWORD): Promise<void> {
  await page.goto(`${url}/console/`);
  await page.waitForURL(/\/api\/auth\/oauth2\/sign-in/);
  await page.getByLabel("User name").fill("admin");
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForSelector("[data-testid=who]:has-text('admin')");
}

/** Opens the measurement's page, three times, until every plotted series is drawn. */
async function recorded(page: Page, dir: string): Promise<Row[]> {
  const peer = await startCloudPeer(
    loadConfig(
      { listen: "127.0.0.1:0", dataDir: path.join(dir, "cloud"), logLevel: "silent", adminPassword: PASSWORD },
      {},
    ),
  );
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
    const seriesUrl = `${peer.url}/api/v1/projects/${PROJECT}/measurements/${meas}/series?data_type=float64&data_id=${seriesName(0)}&buckets=1366`;
    const seriesMs: number[] = [];
    for (let i = 0; i < 3; i++) {
      t0 = process.hrtime.bigint();
      const r = (await (await fetch(seriesUrl, { headers: { authorization: `Bearer ${token}` } })).json()) as {
        point_count: number;
      };
      if (r.point_count !== PER_SERIES) throw new Error(`the series holds ${r.point_count} points`);
      seriesMs.push(ms(t0));
    }

    await signIn(page, peer.url);
    const drawMs: number[] = [];
    let plotted = 0;
    for (let i = 0; i < 3; i++) {
      await page.goto(`${peer.url}/console/#/measurements`);
      await page.waitForSelector("table[aria-label=Measurements]");
      t0 = process.hrtime.bigint();
      await page.goto(`${peer.url}/console/#/measurement/${PROJECT}/${meas}`);
      // Every series in the plot's legend has all its points (the page shows the reduced series' point counts).
      plotted = (await (
        await page.waitForFunction(
          (per) => {
            const plot = document.querySelector<HTMLElement>("[data-testid=plot]");
            const n = document.querySelectorAll("[data-testid=plot] .u-legend .u-series").length - 1;
            return plot?.querySelector("canvas") && n > 0 && Number(plot.dataset.points) === n * per ? n : false;
          },
          PER_SERIES,
          { timeout: 120_000, polling: "raf" },
        )
      ).jsonValue()) as number;
      // The first frame after uPlot drew the data.
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => r(undefined))));
      drawMs.push(ms(t0));
    }
    return [
      {
        what: `upload ${SERIES} × ${PER_SERIES} float64 points (${SECONDS} s at ${HZ} Hz; REST, protobuf)`,
        ms: uploadMs,
      },
      { what: "reduced series of one, 1366 buckets (server, median of 3)", ms: median(seriesMs) },
      {
        what: `open the measurement's page until its plot is drawn (${plotted} of ${SERIES} series plotted; median of 3)`,
        ms: median(drawMs),
        targetMs: 2000,
      },
    ];
  } finally {
    await peer.close();
  }
}

export async function run(): Promise<Row[]> {
  execFileSync(process.execPath, [path.join(ROOT, "scripts/build.mjs"), "--quiet"], { stdio: "inherit" });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-console-"));
  const browser = await launchChromium({ viewport: { width: 1366, height: 900 } });
  const loadBefore = os.loadavg()[0]!;
  try {
    const rows = await recorded(await browser.context.newPage(), dir);
    const live = await browser.context.newPage();
    rows.push(...(await liveLatency(live, (url) => signIn(live, url, ADMIN_PASSWORD))));
    const load = `load average ${loadBefore.toFixed(1)} before, ${os.loadavg()[0]!.toFixed(1)} after (${os.cpus().length} cores)`;
    return rows.map((r) => ({ ...r, load }));
  } finally {
    await browser.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (isMain(import.meta.url)) console.log(`results: ${report("console", await run())}`);
