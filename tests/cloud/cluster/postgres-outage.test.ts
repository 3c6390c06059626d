// PostgreSQL stopped for 30 s while an edge streams: the peer's readiness answers 503 naming the database, the
// real edge agent keeps what was not acknowledged as stored and sends it again, and once PostgreSQL is back
// every point the connector wrote is stored, the ones written during and after the outage too.
import { afterAll, beforeAll, expect, it } from "vitest";
import { cloudIndices, range, writeNumbered } from "../../e2e/points.js";
import { openFifoWriter, startConnectedStack, until, type Stack } from "../../e2e/stack.js";
import { postgresInstalled, startPostgres, type PgServer } from "../../support/postgres.js";

const OUTAGE_MS = 30_000;
/** Points per 100 ms: about 200 points/s, a sensor's pace. */
const PER_TICK = 20;

let pg: PgServer | undefined;
let s: Stack | undefined;
let halted = false;

beforeAll(async () => {
  if (!postgresInstalled()) return;
  pg = await startPostgres();
  s = await startConnectedStack({ agent: "child", cloud: { database: await pg.createDatabase() } });
}, 120_000);
afterAll(async () => {
  if (halted) pg?.resume();
  await s?.close();
  pg?.stop();
}, 120_000);

const ready = async (url: string) => {
  const r = await fetch(`${url}/api/health/ready`, { signal: AbortSignal.timeout(15_000) });
  return { status: r.status, body: (await r.json()) as { title?: string } };
};

it.runIf(postgresInstalled())(
  "loses no point when PostgreSQL stops for 30 s mid-stream",
  async () => {
    const stack = s!;
    const fh = await openFifoWriter(stack.fifo("dc"));
    let next = 0;
    let writing = true;
    // The connector writes on through the outage: the agent queues what the cloud does not acknowledge.
    const writer = (async () => {
      while (writing) {
        await writeNumbered(fh, next, next + PER_TICK);
        next += PER_TICK;
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    try {
      await until(async () => (await cloudIndices(stack)).length >= 200, 30_000, "points stored before the outage");
      pg!.halt();
      halted = true;
      const during = await ready(stack.peer.url);
      expect(during.status).toBe(503);
      expect(during.body.title).toMatch(/database/);
      const haltedAt = next;
      await new Promise((r) => setTimeout(r, OUTAGE_MS));
      expect(await ready(stack.peer.url)).toMatchObject({ status: 503 });
      const resumedAt = next;
      expect(resumedAt - haltedAt).toBeGreaterThan(100);
      pg!.resume();
      halted = false;
      await expect.poll(async () => (await ready(stack.peer.url)).status, { timeout: 30_000, interval: 500 }).toBe(200);
      // The stream goes on after the outage.
      await until(
        async () => (await cloudIndices(stack)).some((i) => i >= resumedAt + 100),
        30_000,
        "points written after the outage stored",
      );
    } finally {
      writing = false;
      await writer;
      await fh.close();
    }
    const written = next;
    let missing = written;
    const stored = await until(
      async () => {
        const got = await cloudIndices(stack);
        missing = written - new Set(got).size;
        return missing === 0 ? got : undefined;
      },
      30_000,
      "all points stored",
    ).catch((e: unknown) => {
      throw new Error(`${(e as Error).message}: ${missing} of ${written} missing`);
    });
    // Every point once: none lost, none stored twice by a re-send.
    expect(stored).toEqual(range(0, written));
  },
  150_000,
);
