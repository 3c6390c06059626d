// The broker's chunks of every stream that arrive during one commit are stored together (shared-commit.ts):
// each chunk once, every answer only after the commit, in statements whose number does not grow with the
// streams (on PostgreSQL each is a round trip). What the API shows must be what was sent: payloads byte for
// byte (in rows and in files), names with quotes and NULs, counters, status; a number stored before is
// skipped in any later commit; a refused stream or a failed commit stores nothing and answers its chunks.
import { describe, expect, it } from "vitest";
import type { UpstreamChunkIn, UpstreamRef } from "../../../cloud/measurements/ingest/upstream-store.js";
import { commitLane, POSTGRES_LANES } from "../../../cloud/measurements/ingest/commit-lanes.js";
import { NodeMismatch } from "../../../cloud/measurements/ingest/upstream-store.js";
import { measurementLock } from "../../../cloud/measurements/service/model.js";
import { onPostgres } from "../../support/test-database.js";
import { scanUpstreamChunkMessage } from "../../../proto/wire/chunk-scan.js";
import { encodeMessage } from "../../../proto/wire/message.js";
import { countCommits, DEFAULT_PROJECT, EDGE, P, ndjson, uuid, withPeer, DIRECT_COMMIT } from "./helpers.js";

type Point = { name: string; type?: string; payload: Buffer };
const chunk = (n: number, points: Point[]): UpstreamChunkIn => ({
  sequenceNumber: n,
  dataPointGroups: points.map((p) => ({
    dataId: { name: p.name, type: p.type ?? "t" },
    dataPoints: [{ elapsedTime: BigInt(n) * 1000n, payload: p.payload }],
  })),
});
const small = (n: number, name = "a") => chunk(n, [{ name, payload: Buffer.from(`${name}@${n}`) }]);

/** As the broker hands a received chunk over: each group's points as the frame's bytes (chunk-scan.ts). */
function received(n: number, points: Point[]): UpstreamChunkIn {
  const frame = encodeMessage(
    {
      upstreamChunk: {
        streamIdAlias: 1,
        streamChunk: {
          sequenceNumber: n,
          dataPointGroups: points.map((p) => ({
            dataId: { name: p.name, type: p.type ?? "t" },
            dataPoints: [{ elapsedTime: n * 1000, payload: p.payload }],
          })),
        },
      },
    },
    "proto",
  );
  const scanned = scanUpstreamChunkMessage(frame)!;
  return {
    sequenceNumber: n,
    dataPointGroups: scanned.groups.map((g) => ({
      dataId: g.dataId!,
      get dataPoints() {
        return g.dataPoints.map((p) => ({ elapsedTime: BigInt(String(p.elapsedTime)), payload: p.payload! }));
      },
      raw: g,
    })),
  };
}

/** Commits run side by side on PostgreSQL, one per lane of measurements; SQLite's one writer has one lane. */
const LANES = onPostgres() ? POSTGRES_LANES : 1;
/** How many commits the chunks of these streams take at least: one per lane their measurements are in. */
const lanesOf = (ups: readonly UpstreamRef[]) => new Set(ups.map((u) => commitLane(u.sessionId, LANES))).size;

describe("measurements: one group commit for the chunks of every stream", () => {
  const t = withPeer(DIRECT_COMMIT);
  const call = (path: string, init?: Parameters<typeof t.call>[1]) => t.call(path, init);
  const store = (up: UpstreamRef, c: UpstreamChunkIn) => t.peer.svc.measurements.upstream.storeChunk(up, c);
  const sequences = async (m: string) =>
    (await call(`${P}/measurements/${m}/sequences`)).body.items as Array<Record<string, unknown>>;
  const measurement = async (m: string) => (await call(`${P}/measurements/${m}`)).body as Record<string, any>;
  const dataIds = async (m: string) =>
    ((await call(`${P}/data_ids?name=${m}`)).body.items as Array<{ data_id: string }>).map((d) => d.data_id).sort();
  const stream = (session: string = uuid()): UpstreamRef => ({
    streamId: uuid(),
    sessionId: session,
    projectUuid: DEFAULT_PROJECT,
    nodeId: EDGE,
    persist: true,
  });
  /** The data points as `data_id payload` lines (one point comes back as a single JSON object). */
  const points = async (m: string) => {
    const body = (await call(`${P}/data?name=${m}`)).body as string | Record<string, any>;
    return typeof body === "string" ? ndjson(body) : [body];
  };
  const texts = async (m: string) =>
    (await points(m)).map((l) => `${l.data_id} ${Buffer.from(l.data.d, "base64").toString()}`).sort();

  /** Runs fn while the chunk commits wait behind a transaction that holds the database (every writer waits). */
  async function whileHeld<T>(fn: () => T): Promise<{ value: T; release: () => Promise<void> }> {
    let release!: () => void;
    let entered!: () => void;
    const inside = new Promise<void>((r) => (entered = r));
    const held = t.peer.svc.db.transaction(async () => {
      entered();
      await new Promise<void>((r) => (release = r));
    });
    await inside;
    const value = fn();
    return { value, release: async () => (release(), await held) };
  }

  it("stores the chunks of many streams in one commit per lane, each once, and answers none before it committed", async () => {
    const ups = Array.from({ length: 40 }, () => stream());
    // Two streams share a measurement now and then: one more stream on the first session.
    ups.push({ ...stream(ups[0]!.sessionId) });
    for (const up of ups) expect(await store(up, small(1))).toBe("ok");
    const counted = countCommits(t.peer.svc.db, () => t.peer.svc.measurements.upstream.drain());
    try {
      const answered: string[] = [];
      const { value: pending, release } = await whileHeld(() =>
        ups.flatMap((up) => [2, 3, 3].map((n) => store(up, small(n)).then((r) => (answered.push(r), r)))),
      );
      await new Promise((r) => setTimeout(r, 100));
      expect(answered).toEqual([]);
      await release();
      const results = await Promise.all(pending);
      expect(results.filter((r) => r === "ok").length).toBe(ups.length * 2);
      expect(results.filter((r) => r === "skipped").length).toBe(ups.length);
      // The holder, and one commit for every stream's chunks of a lane.
      expect((await counted.commits()).length).toBe(1 + lanesOf(ups));
    } finally {
      counted.restore();
    }
    for (const up of ups) {
      const seq = (await sequences(up.sessionId)).find((s) => s.uuid === up.streamId);
      expect(seq).toMatchObject({ received_chunks_count: 3, received_data_points: 3 });
    }
    expect(await texts(ups[1]!.sessionId)).toEqual(["a a@1", "a a@2", "a a@3"]);
    expect(await texts(ups[0]!.sessionId)).toEqual(["a a@1", "a a@1", "a a@2", "a a@2", "a a@3", "a a@3"]);
  });

  it("sends as many statements for a commit of 60 streams as for one of 3 (on PostgreSQL: round trips)", async () => {
    const statementsFor = async (n: number) => {
      const ups = Array.from({ length: n }, () => stream());
      for (const up of ups) expect(await store(up, small(1))).toBe("ok");
      expect(await Promise.all(ups.map((up) => store(up, small(2))))).toEqual(Array(n).fill("ok"));
      const counted = countCommits(t.peer.svc.db, () => t.peer.svc.measurements.upstream.drain());
      try {
        const { value, release } = await whileHeld(() => ups.map((up) => store(up, small(3, "b"))));
        await release();
        expect(await Promise.all(value)).toEqual(Array(n).fill("ok"));
        return (await counted.commits()).slice(1);
      } finally {
        counted.restore();
      }
    };
    const few = await statementsFor(3);
    const many = await statementsFor(60);
    expect(few.length).toBeLessThanOrEqual(LANES);
    expect(many.length).toBeLessThanOrEqual(LANES);
    expect(new Set([...few, ...many]).size).toBe(1);
  });

  it("makes the measurements of 60 new sessions in as many statements as of 3, each owned by its edge with its first base time", async () => {
    const firstCommit = async (n: number) => {
      const ups = Array.from({ length: n }, () => stream());
      const counted = countCommits(t.peer.svc.db, () => t.peer.svc.measurements.upstream.drain());
      try {
        const { value, release } = await whileHeld(() => ups.map((up) => store(up, small(1))));
        await release();
        expect(await Promise.all(value)).toEqual(Array(n).fill("ok"));
        return { ups, statements: (await counted.commits()).slice(1) };
      } finally {
        counted.restore();
      }
    };
    const few = await firstCommit(3);
    const many = await firstCommit(60);
    expect(many.statements.length).toBeLessThanOrEqual(LANES);
    expect(new Set([...few.statements, ...many.statements]).size).toBe(1);
    for (const up of [few.ups[0]!, many.ups[59]!]) {
      const m = await measurement(up.sessionId);
      expect(m).toMatchObject({
        uuid: up.sessionId,
        edge_uuid: EDGE,
        basetime_type: "api_first_received",
        sequences: { status: "measuring", received_data_points: 1 },
      });
      const bts = (await call(`${P}/measurements/${up.sessionId}/basetimes`)).body.items as Array<
        Record<string, unknown>
      >;
      expect(bts).toMatchObject([{ type: "api_first_received", name: "api_first_received", priority: 10 }]);
      expect(m.basetime).toBe(bts[0]!.basetime);
    }
  });

  it("commits a backlog of thousands of chunks that queued behind a slow commit in one commit per lane", async () => {
    const ups = Array.from({ length: 10 }, () => stream());
    const counted = countCommits(t.peer.svc.db, () => t.peer.svc.measurements.upstream.drain());
    try {
      const { value, release } = await whileHeld(() =>
        ups.flatMap((up) => Array.from({ length: 300 }, (_, i) => store(up, small(i + 1)))),
      );
      await release();
      expect(await Promise.all(value)).toEqual(Array(3000).fill("ok"));
      expect((await counted.commits()).length).toBe(1 + lanesOf(ups)); // the holder, and the backlog's commits
    } finally {
      counted.restore();
    }
    expect(await sequences(ups[9]!.sessionId)).toMatchObject([
      { received_chunks_count: 300, received_data_points: 300 },
    ]);
  });

  // SQLite has one writer: a commit waiting there waits for every other.
  if (onPostgres())
    it("commits a measurement's chunks while another measurement's commit waits for its lock (PostgreSQL)", async () => {
      const a = stream();
      let b = stream();
      while (commitLane(b.sessionId, LANES) === commitLane(a.sessionId, LANES)) b = stream();
      expect(await Promise.all([store(a, small(1)), store(b, small(1))])).toEqual(["ok", "ok"]);
      let release!: () => void;
      let entered!: () => void;
      const inside = new Promise<void>((r) => (entered = r));
      const held = t.peer.svc.db.transaction(async () => {
        entered();
        await new Promise<void>((r) => (release = r));
      }, measurementLock(a.sessionId));
      await inside;
      let aAnswered = false;
      const aDone = store(a, small(2)).then((r) => ((aAnswered = true), r));
      const bDone = store(b, small(2));
      try {
        const timeout = new Promise((r) => setTimeout(() => r("not answered within 10 s"), 10_000));
        expect(await Promise.race([bDone, timeout])).toBe("ok");
        expect(aAnswered).toBe(false);
      } finally {
        release();
        await held;
      }
      expect(await aDone).toBe("ok");
      expect(await texts(a.sessionId)).toEqual(["a a@1", "a a@2"]);
      expect(await texts(b.sessionId)).toEqual(["a a@1", "a a@2"]);
    });

  it("skips a number stored in an earlier commit and counts it once, in a commit with other numbers", async () => {
    const up = stream();
    expect(await Promise.all([1, 2, 3].map((n) => store(up, small(n))))).toEqual(["ok", "ok", "ok"]);
    expect(await Promise.all([2, 4, 3, 5, 4].map((n) => store(up, small(n))))).toEqual([
      "skipped",
      "ok",
      "skipped",
      "ok",
      "skipped",
    ]);
    expect(await store(up, small(1))).toBe("skipped");
    expect(await sequences(up.sessionId)).toMatchObject([{ received_chunks_count: 5, received_data_points: 5 }]);
    expect(await texts(up.sessionId)).toEqual(["a a@1", "a a@2", "a a@3", "a a@4", "a a@5"]);
  });

  it("reads back payloads byte for byte, from rows and from files, with names that need quoting or hold a NUL", async () => {
    const up = stream();
    const big = Buffer.from(Buffer.alloc(40 * 1024).map((_, i) => (i * 7) & 0xff));
    const quoted = "it's a \"name\"'); DROP TABLE meas_chunks; --";
    expect(await store(up, small(1))).toBe("ok");
    expect(
      await Promise.all([
        store(
          up,
          chunk(2, [
            { name: quoted, payload: Buffer.from([0, 39, 255]) },
            { name: "a", payload: Buffer.from("a@2") },
          ]),
        ),
        store(up, received(3, [{ name: "big", type: "raw", payload: big }])),
      ]),
    ).toEqual(["ok", "ok"]);
    expect(await sequences(up.sessionId)).toMatchObject([
      { uuid: up.streamId, received_chunks_count: 3, received_data_points: 4 },
    ]);
    expect(await measurement(up.sessionId)).toMatchObject({
      status: "measuring",
      ended: false,
      max_elapsed_time: expect.any(Number),
    });
    expect(await dataIds(up.sessionId)).toEqual(["a", "big", quoted].sort());
    const lines = ndjson((await call(`${P}/data?name=${up.sessionId}&time_format=ns`)).body as string);
    const got = lines.map((l) => `${l.data_id} ${Buffer.from(l.data.d, "base64").toString("hex")}`);
    const hex = (s: string) => Buffer.from(s).toString("hex");
    expect(got.sort()).toEqual(
      [`a ${hex("a@1")}`, `a ${hex("a@2")}`, `${quoted} 0027ff`, `big ${big.toString("hex")}`].sort(),
    );
  });

  it("stores a name with a NUL character on SQLite; PostgreSQL text cannot hold one, so there only that stream is refused", async () => {
    const up = stream();
    const other = stream();
    const { value, release } = await whileHeld(() => [
      store(up, small(1, "nul\u0000name")).catch((e: unknown) => e),
      store(other, small(1)),
    ]);
    await release();
    const [nul, ok] = await Promise.all(value);
    expect(ok).toBe("ok");
    if (t.peer.svc.db.dialect === "sqlite") {
      expect(nul).toBe("ok");
      expect(await texts(up.sessionId)).toEqual(["nul\u0000name nul\u0000name@1"]);
    } else {
      expect(nul).toBeInstanceOf(Error);
      expect((nul as Error).message).toMatch(/NUL/);
    }
    expect(await texts(other.sessionId)).toEqual(["a a@1"]);
  });

  it("stores large payloads of batch after batch intact (their buffers are reused once a batch's writes settled)", async () => {
    const up = stream();
    const payload = (n: number) => Buffer.alloc(100 * 1024, n);
    const send = (from: number) =>
      Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          store(up, received(from + i, [{ name: "big", payload: payload(from + i) }])),
        ),
      );
    expect(await send(1)).toEqual(Array(8).fill("ok"));
    expect(await send(9)).toEqual(Array(8).fill("ok"));
    const lines = ndjson((await call(`${P}/data?name=${up.sessionId}`)).body as string);
    const got = lines
      .map((l) => Buffer.from(l.data.d, "base64"))
      .map((b) => [b.length, b[0], b.every((x) => x === b[0])]);
    expect(got).toEqual(Array.from({ length: 16 }, (_, i) => [100 * 1024, i + 1, true]));
  });

  it("refuses the chunks of a stream whose measurement belongs to another node, and stores the others of the commit", async () => {
    const mine = stream();
    const theirs = { ...stream(), nodeId: "0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d" };
    expect(await store(theirs, small(1))).toBe("ok");
    const intruder = { ...stream(theirs.sessionId) };
    const { value, release } = await whileHeld(() => [
      store(mine, small(1)),
      store(intruder, small(1)).catch((e: unknown) => e),
    ]);
    await release();
    const [ok, refused] = await Promise.all(value);
    expect(ok).toBe("ok");
    expect(refused).toBeInstanceOf(NodeMismatch);
    expect((await sequences(theirs.sessionId)).map((s) => s.uuid)).toEqual([theirs.streamId]);
  });

  it("follows what the edge said it sent when a measurement ended mid-stream", async () => {
    const up = stream();
    expect(await Promise.all([1, 2, 3].map((n) => store(up, small(n))))).toEqual(["ok", "ok", "ok"]);
    const m = up.sessionId;
    expect(
      (
        await call(`${P}/measurements/${m}/sequences/${up.streamId}`, {
          method: "PATCH",
          json: { expected_data_points: 4, final_sequence_number: 4 },
        })
      ).status,
    ).toBe(200);
    expect((await call(`${P}/measurements/${m}/end`, { method: "PUT" })).body).toEqual({ status: "resending" });
    expect(await store(up, small(4))).toBe("ok");
    expect(await measurement(m)).toMatchObject({
      ended: true,
      completed: true,
      status: "finished",
      sequences: { status: "completed", received_data_points: 4 },
    });
  });

  it("makes a measurement deleted mid-stream again, with only the chunks sent after", async () => {
    const up = stream();
    expect(await Promise.all([1, 2].map((n) => store(up, small(n))))).toEqual(["ok", "ok"]);
    expect((await call(`${P}/measurements/${up.sessionId}`, { method: "DELETE" })).status).toBe(204);
    expect(await store(up, small(3, "b"))).toBe("ok");
    expect(await sequences(up.sessionId)).toMatchObject([
      { uuid: up.streamId, received_chunks_count: 1, received_data_points: 1 },
    ]);
    expect(await dataIds(up.sessionId)).toEqual(["b"]);
  });
});
