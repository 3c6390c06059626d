// The console's live plot, from the agent's FIFO to the pixel: a connected stack (cloud peer, edge agent as a child
// process, the console in Chromium) streams 10 float64 series at 1,000 points/s each into the agent's FIFO; the
// measurement's page follows it live. Now and then the first plotted series jumps to a new maximum for 50 ms, and
// the page (a requestAnimationFrame loop reading the plot's canvas) notes when that series' colour first reaches the
// top of the plot. The delay is that moment less the moment the jump was written to the FIFO (one machine, one
// clock).
import type { FileHandle } from "node:fs/promises";
import type { Page } from "playwright-core";
import { encodeIscpV2Frame } from "../runtime/ipc/iscp-v2-compat.js";
import { openFifoWriter, startConnectedStack, until, type Stack } from "../tests/e2e/stack.js";
import type { Row } from "./lib.js";

const LIVE_SERIES = 10;
const LIVE_RATE = 1000;
const TICK_MS = 10;
/** The first series the page plots (data IDs are listed by name): the one that jumps. */
const MARKER = "live/a0";
const names = [MARKER, ...Array.from({ length: LIVE_SERIES - 1 }, (_, i) => `live/s${i + 1}`)];

const f64 = (v: number) => {
  const b = Buffer.alloc(8);
  b.writeDoubleBE(v);
  return b;
};

/** Writes every series at LIVE_RATE, paced by the wall clock; `level()` is the marker's value at that moment. */
function startWriter(fh: FileHandle, level: () => number): { stop(): Promise<void>; written: () => number } {
  let written = 0;
  let running = true;
  const t0 = Date.now();
  // The format's time is the connector's monotonic clock (as the sample connector's), not the epoch.
  const mono0 = process.hrtime.bigint();
  const done = (async () => {
    while (running) {
      const due = Math.floor(((Date.now() - t0) * LIVE_RATE) / 1000);
      const frames: Buffer[] = [];
      for (; written < due; written++) {
        const ns = mono0 + (BigInt(written) * 1_000_000_000n) / BigInt(LIVE_RATE);
        const [sec, nsec] = [Number(ns / 1_000_000_000n), Number(ns % 1_000_000_000n)];
        for (const name of names)
          frames.push(
            encodeIscpV2Frame(sec, nsec, "float64", name, f64(name === MARKER ? level() : Math.sin(written / 500))),
          );
      }
      if (frames.length) await fh.write(Buffer.concat(frames));
      await new Promise((r) => setTimeout(r, TICK_MS));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await done;
    },
    written: () => written,
  };
}

/**
 * In the page: resolves with Date.now() of the first frame in which the first series reaches the top quarter of the
 * plot right of where it did before (uPlot pads a scale by a tenth of its span, so the newest maximum is drawn
 * there and the last one, half as high, falls below). Text, not a function: tsx's transform would name the page's
 * inner functions with a helper the page does not have.
 */
const JUMP_SEEN = `new Promise((resolve) => {
  // The rightmost column (of the plotting area) where the series reaches the top quarter: an earlier jump is there
  // until the new one rescales the plot, and it only moves left as the live window grows; the new one is right of it.
  const rightmost = () => {
    const canvas = document.querySelector("[data-testid=plot] canvas");
    const over = document.querySelector("[data-testid=plot] .u-over");
    if (!canvas || !over) return -1;
    const ratio = canvas.width / canvas.getBoundingClientRect().width;
    const top = Math.round(over.offsetTop * ratio);
    const rows = Math.max(1, Math.round(over.offsetHeight * ratio * 0.25));
    // The plotting area only: the series' value axis is drawn in its colour too.
    const left = Math.round(over.offsetLeft * ratio);
    const width = Math.round(over.offsetWidth * ratio);
    const data = canvas.getContext("2d").getImageData(left, top, width, rows).data;
    let x = -1;
    for (let i = 0; i < data.length; i += 4)
      if (Math.abs(data[i] - 31) < 30 && Math.abs(data[i + 1] - 111) < 30 && Math.abs(data[i + 2] - 209) < 30)
        x = Math.max(x, (i / 4) % width);
    return x;
  };
  const before = rightmost();
  const look = () => (rightmost() > before + 2 ? resolve(Date.now()) : requestAnimationFrame(look));
  requestAnimationFrame(look);
})`;

function nextJumpSeen(page: Page): Promise<number> {
  const seen = page.evaluate(JUMP_SEEN) as Promise<number>;
  // Awaited after the jump is written; a failure meanwhile must not end the process before the stack is closed.
  seen.catch(() => undefined);
  return seen;
}

export async function liveLatency(page: Page, signIn: (url: string) => Promise<void>, trials = 5): Promise<Row[]> {
  const s: Stack = await startConnectedStack({ agent: "child" });
  let writer: ReturnType<typeof startWriter> | undefined;
  let fh: FileHandle | undefined;
  try {
    fh = await openFifoWriter(s.fifo("dc"));
    let level = 0;
    writer = startWriter(fh, () => level);
    const m = await until(
      async () => (await s.measurements()).find((x) => x.status === "measuring" && x.received_data_points > 0),
      30_000,
      "a running measurement",
    );
    await signIn(s.peer.url);
    await page.goto(`${s.peer.url}/console/#/measurement/${s.cloud.projectUuid}/${m.uuid}`);
    await page.waitForSelector("[data-testid=plot][data-live=true] canvas", { timeout: 60_000 });
    const first = await page.locator("[data-testid=plot] .u-legend .u-series").nth(1).locator(".u-label").textContent();
    if (first !== MARKER) throw new Error(`the page plots ${first} first, not ${MARKER}`);
    const plotted = await page.locator("[data-testid=plot] .u-legend .u-series").count();
    const delays: number[] = [];
    for (let k = 0; k < trials; k++) {
      // Each jump twice the last: the earlier ones stay in the window, at half the height or less.
      const seen = nextJumpSeen(page);
      const at = Date.now();
      level = 1000 * 2 ** k;
      await new Promise((r) => setTimeout(r, 50));
      level = 0;
      const shown = await Promise.race([seen, new Promise<undefined>((r) => setTimeout(r, 15_000))]);
      if (shown === undefined) {
        throw new Error(`jump ${k + 1} not drawn within 15 s`);
      }
      delays.push(shown - at);
      await new Promise((r) => setTimeout(r, 1000));
    }
    const sorted = [...delays].sort((a, b) => a - b);
    return [
      {
        what: `live: ${LIVE_SERIES} series × ${LIVE_RATE} points/s, FIFO write to the pixel (${plotted - 1} plotted; median of ${trials})`,
        ms: sorted[Math.floor(trials / 2)],
        targetMs: 1000,
        note: `each: ${delays.join(", ")} ms; ${writer.written() * LIVE_SERIES} points written`,
      },
    ];
  } finally {
    await writer?.stop();
    await fh?.close();
    await s.close();
  }
}
