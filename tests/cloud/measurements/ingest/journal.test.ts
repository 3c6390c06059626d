// The ingest journal's files and applies (its records: journal-records.test.ts): what a crash leaves is read back
// whole, a torn or damaged last record is left out, applied segments go, and a journal reopened after a crash
// applies exactly what it held.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import zlib from "node:zlib";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { loadConfig } from "../../../../cloud/config.js";
import {
  APPLY_AFTER_MS,
  APPLY_MAX_AFTER_MS,
  APPLY_MAX_CHUNKS,
  IngestJournal,
  RUN_MAX_CHUNKS,
} from "../../../../cloud/measurements/ingest/ingest-journal.js";
import type { StreamChunks } from "../../../../cloud/measurements/ingest/shared-commit.js";
import { copyJournal, JournalFiles, readRecords } from "../../../../cloud/measurements/storage/journal-files.js";
import { stored, stream } from "./journal-fixtures.js";

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "ingest-journal-"));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const segments = () => fs.readdirSync(dir).filter((f) => f.endsWith(".journal"));

describe("journal files", () => {
  it("reads back every record after a crash, and leaves out a torn last record", async () => {
    const { files } = await JournalFiles.open(dir, "power-loss");
    const bodies = [Buffer.from("first"), Buffer.alloc(70_000, 7), Buffer.from("third")];
    for (const b of bodies) await files.append(b);
    await files.close();
    const [seg] = segments();
    const file = path.join(dir, seg!);
    // A crash in the middle of a fourth record's write.
    fs.appendFileSync(file, Buffer.from([0, 0, 1, 0, 1, 2, 3, 4, 5, 6]));
    const again = await JournalFiles.open(dir, "power-loss");
    expect(again.left.map((r) => r.body)).toEqual(bodies);
    expect(again.left.map((r) => r.id)).toEqual([1, 2, 3]);
    expect(again.torn).toEqual([{ file, bytes: 10 }]);
    await again.files.close();
  });

  it("stops at a record whose bytes do not match its CRC", () => {
    const rec = (s: string) => {
      const body = Buffer.from(s);
      const head = Buffer.alloc(8);
      head.writeUInt32BE(body.length, 0);
      head.writeUInt32BE(zlib.crc32(body), 4);
      return Buffer.concat([head, body]);
    };
    const damaged = rec("two");
    damaged[9] ^= 0xff;
    const read = readRecords(Buffer.concat([rec("one"), damaged, rec("three")]));
    expect(read.records.map(String)).toEqual(["one"]);
    expect(read.end).toBe(rec("one").length);
  });

  it("removes sealed segments once every record in them is applied, and keeps appending after", async () => {
    const { files } = await JournalFiles.open(dir, "process-crash");
    await files.append(Buffer.from("one"));
    const sealed = await files.seal();
    const two = await files.append(Buffer.from("two"));
    expect(segments()).toHaveLength(2);
    await files.trim(sealed - 1); // the sealed segment still holds an unapplied record
    expect(segments()).toHaveLength(2);
    await files.trim(sealed);
    expect(segments()).toHaveLength(1);
    await files.close();
    const again = await JournalFiles.open(dir, "process-crash");
    expect(again.left.map((r) => String(r.body))).toEqual(["two"]);
    expect(two).toBe(sealed + 1);
    await again.files.close();
  });
});

describe("the journal's copy for a backup", () => {
  it("copies the whole records and leaves out a segment the peer removed meanwhile", async () => {
    const { files } = await JournalFiles.open(dir, "process-crash");
    await files.append(Buffer.from("kept"));
    await files.close();
    // A segment listed and then trimmed (applied) before its copy: as a link to a file no longer there.
    fs.symlinkSync(path.join(dir, "gone"), path.join(dir, "7.journal"));
    const to = path.join(dir, "backup");
    await copyJournal(dir, to);
    expect(fs.readdirSync(to).sort()).toEqual(
      segments()
        .filter((f) => f !== "7.journal")
        .sort(),
    );
    const copied = fs.readdirSync(to).flatMap((f) => readRecords(fs.readFileSync(path.join(to, f))).records);
    expect(copied.map(String)).toEqual(["kept"]);
  });
});

describe("the ingest journal", () => {
  const log = pino({ level: "silent" });

  it("applies after a crash exactly the records not yet applied, then forgets them", async () => {
    const applied: StreamChunks[][] = [];
    const first = await IngestJournal.open(dir, "power-loss", async (s) => void applied.push(s), log);
    await first.recover();
    await first.record([stream("s1", [1, 2])]);
    await first.applied(Infinity);
    expect(stored(applied.flat())).toEqual(stored([stream("s1", [1, 2])]));
    // Acknowledged; the process dies before their apply: what is on disk then is what a restart finds.
    await first.record([stream("s1", [3])]);
    await first.record([stream("s2", [1]), stream("s1", [4])]);
    const crashed = fs.mkdtempSync(path.join(os.tmpdir(), "ingest-journal-crashed-"));
    try {
      // Its segments as a crash leaves them (the lock, a socket, is not a file to copy; a dead one is taken over).
      fs.cpSync(dir, crashed, { recursive: true, filter: (f) => !f.endsWith(".lock") });
      await first.close();

      const recovered: StreamChunks[][] = [];
      const second = await IngestJournal.open(crashed, "power-loss", async (s) => void recovered.push(s), log);
      expect(await second.recover()).toBe(3);
      // One apply, each stream's chunks together in the order they were acknowledged.
      expect(recovered).toHaveLength(1);
      expect(stored(recovered[0]!)).toEqual(stored([stream("s1", [3, 4]), stream("s2", [1])]));
      await second.close();

      const third = await IngestJournal.open(crashed, "power-loss", async () => expect.unreachable(), log);
      expect(await third.recover()).toBe(0);
      await third.close();
    } finally {
      fs.rmSync(crashed, { recursive: true, force: true });
    }
  });

  it("keeps acknowledged chunks whose apply failed, says so once, and applies them when it works again", async () => {
    const lines: Array<{ level: number; msg: string }> = [];
    const sink = pino({ level: "debug" }, { write: (l: string) => void lines.push(JSON.parse(l)) });
    let tries = 0;
    const applied: StreamChunks[][] = [];
    const journal = await IngestJournal.open(
      dir,
      "process-crash",
      async (s) => {
        if (++tries <= 2) throw new Error("disk full");
        applied.push(s);
      },
      sink,
    );
    await journal.recover();
    await journal.record([stream("s1", [1])]);
    await journal.applied(1_500); // gives up waiting; the chunks are not lost
    expect(applied).toHaveLength(0);
    await journal.applied(Infinity);
    expect(stored(applied.flat())).toEqual(stored([stream("s1", [1])]));
    expect(lines.filter((l) => l.level === 40).map((l) => l.msg)).toEqual([
      "applying acknowledged chunks failed; they stay in the ingest journal",
    ]);
    expect(lines.filter((l) => l.level === 20)).toHaveLength(1);
    expect(lines.filter((l) => l.level === 30).map((l) => l.msg)).toEqual([
      "acknowledged chunks from the ingest journal applied again",
    ]);
    await journal.close();
  });
});

describe("the ingest journal under a steady load", () => {
  afterEach(() => void vi.useRealTimers());

  it("applies what one run could not take as soon as it is due, not a whole delay after that run", async () => {
    // The clock is the test's: records are made now, then time moves only when the test says.
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
    const applies: number[] = [];
    /** When each apply ran, on the test's clock. */
    const at: number[] = [];
    const journal = await IngestJournal.open(
      dir,
      "process-crash",
      async (s) => {
        applies.push(s.reduce((n, x) => n + x.chunks.length, 0));
        at.push(performance.now());
      },
      pino({ level: "silent" }),
    );
    await journal.recover();
    // Three records of more than half a run each, acknowledged together: a run takes one of them.
    const perRecord = RUN_MAX_CHUNKS / 2 + 1;
    const numbers = Array.from({ length: perRecord }, (_, i) => i + 1);
    const start = performance.now();
    for (const s of ["a", "b", "c"]) await journal.record([stream(s, numbers)]);
    await vi.advanceTimersByTimeAsync(APPLY_AFTER_MS - 1);
    expect(applies).toEqual([]);
    // The clock moves only to the journal's next timer; its files' real I/O runs in between.
    const end = Date.now() + 10_000;
    const total = () => applies.reduce((n, x) => n + x, 0);
    while (total() < 3 * perRecord && Date.now() < end) {
      await vi.advanceTimersToNextTimerAsync();
      await new Promise((r) => setImmediate(r));
    }
    // Each record's one stream in transactions of APPLY_MAX_CHUNKS at most, in order.
    const slices = [
      ...Array(Math.floor(perRecord / APPLY_MAX_CHUNKS)).fill(APPLY_MAX_CHUNKS),
      perRecord % APPLY_MAX_CHUNKS,
    ];
    expect(applies).toEqual([...slices, ...slices, ...slices]);
    // The first when due; the others as soon as the one before ended, all three records being as old.
    expect(at[0]).toBe(start + APPLY_AFTER_MS);
    expect(at[at.length - 1]! - at[0]!).toBeLessThan(APPLY_AFTER_MS);
    vi.useRealTimers();
    await journal.close();
  });

  it("waits longer for slow streams, so each brings several chunks to an apply, and no longer for fast ones", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
    /** The applies of `records` records `everyMs` apart, each with one chunk of each of `streams` streams. */
    const paced = async (name: string, streams: number, everyMs: number, records: number) => {
      const applies: Array<{ at: number; perStream: number }> = [];
      const journal = await IngestJournal.open(
        path.join(dir, name),
        "process-crash",
        async (s) =>
          void applies.push({
            at: performance.now(),
            perStream: s.reduce((n, x) => n + x.chunks.length, 0) / s.length,
          }),
        pino({ level: "silent" }),
      );
      await journal.recover();
      for (let k = 1; k <= records; k++) {
        await journal.record(Array.from({ length: streams }, (_, i) => stream(`${name}${i}`, [k])));
        await vi.advanceTimersByTimeAsync(everyMs);
        await new Promise((r) => setImmediate(r)); // the apply's file I/O is real
      }
      let closed = false;
      const closing = journal.close().then(() => void (closed = true));
      while (!closed) {
        await vi.advanceTimersByTimeAsync(10);
        await new Promise((r) => setImmediate(r));
      }
      await closing;
      const gaps = applies.slice(1).map((a, i) => a.at - applies[i]!.at);
      return { applies, gaps };
    };
    // A fleet's edges: a chunk per stream every 50 ms. After the first apply (due at APPLY_AFTER_MS), each waits
    // for about 16 chunks per stream, up to APPLY_MAX_AFTER_MS.
    const slow = await paced("slow", 200, 50, 60);
    expect(slow.applies[0]!.perStream).toBeLessThanOrEqual(APPLY_AFTER_MS / 50 + 1);
    const later = slow.applies.slice(1, -1); // the last is close()'s
    expect(later.length).toBeGreaterThan(1);
    for (const a of later) expect(a.perStream).toBeGreaterThanOrEqual(14);
    for (const g of slow.gaps.slice(0, -1)) {
      expect(g).toBeGreaterThan(2 * APPLY_AFTER_MS);
      expect(g).toBeLessThanOrEqual(APPLY_MAX_AFTER_MS + 50);
    }
    // Fast streams, a chunk every 5 ms each: every apply is due APPLY_AFTER_MS after its first record.
    const fast = await paced("fast", 2, 5, 300);
    expect(fast.gaps.length).toBeGreaterThan(3);
    for (const g of fast.gaps.slice(0, -1)) expect(g).toBeLessThanOrEqual(APPLY_AFTER_MS + 10);
  });

  it("writes each stream's chunks of a run in one apply, whatever the records they came in", async () => {
    const applied: StreamChunks[][] = [];
    const journal = await IngestJournal.open(
      dir,
      "process-crash",
      async (s) => void applied.push(s),
      pino({ level: "silent" }),
    );
    await journal.recover();
    // A fleet: 2,000 streams, a chunk of each in each of three commits (6,000 chunks, more than one apply holds).
    const sessions = Array.from({ length: 2_000 }, (_, i) => `s${i}`);
    for (const n of [1, 2, 3]) await journal.record(sessions.map((s) => stream(s, [n])));
    await journal.applied();
    const streams = applied.flat();
    expect(streams).toHaveLength(sessions.length);
    expect(streams.map((s) => s.up.sessionId).sort()).toEqual([...sessions].sort());
    for (const s of streams) expect(s.chunks.map((c) => c.sequenceNumber)).toEqual([1, 2, 3]);
    expect(applied.length).toBe(2);
    for (const a of applied) expect(a.reduce((n, x) => n + x.chunks.length, 0)).toBeLessThanOrEqual(APPLY_MAX_CHUNKS);
    await journal.close();
  });
});

describe("the ingest-journal setting", () => {
  it("is on unless set, takes on or off, and refuses anything else with one clear line", () => {
    expect(loadConfig({}, {}).ingestJournal).toBe("on");
    expect(loadConfig({}, { CLOUD_INGEST_JOURNAL: "off" }).ingestJournal).toBe("off");
    expect(() => loadConfig({}, { CLOUD_INGEST_JOURNAL: "yes" })).toThrow(
      'invalid CLOUD_INGEST_JOURNAL "yes": expected on or off',
    );
  });
});
