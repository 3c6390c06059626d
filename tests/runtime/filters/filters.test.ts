import * as Schema from "effect/Schema";
import { describe, expect, it } from "vitest";
import type { DataPoint } from "../../../runtime/datapoint.js";
import { splitAnnexB } from "../../../runtime/filters/h264.js";
import { compilePattern, patternError } from "../../../runtime/filters/pattern.js";
import { FilterPipeline } from "../../../runtime/filters/pipeline.js";
import { FilterDefinition, type FilterDefinitionEncoded } from "../../../runtime/filters/schema.js";
import { point } from "../../support/datapath.js";

const def = (d: FilterDefinitionEncoded) => Schema.decodeUnknownSync(FilterDefinition)(d);
const names = (ps: DataPoint[]) => ps.map((p) => p.name);

describe("patterns", () => {
  it("match iSCP-style wildcards by level", () => {
    const m = (p: string, v: string) => compilePattern(p)(v);
    expect(m("#", "a/b")).toBe(true);
    expect(m("a/#", "a")).toBe(true);
    expect(m("a/#", "a/b/c")).toBe(true);
    expect(m("a/#", "ab/c")).toBe(false);
    expect(m("+/b", "x/b")).toBe(true);
    expect(m("+/b", "x/y/b")).toBe(false);
    expect(m("a/+/c", "a/b/c")).toBe(true);
    expect(m("a/b", "a/b")).toBe(true);
    expect(m("a/b", "a/b/c")).toBe(false);
    expect(m("h264_frame/#", "h264_frame/idr_frame")).toBe(true);
  });

  it("reject misplaced wildcards", () => {
    expect(patternError("a/#/b")).toBeDefined();
    expect(patternError("a#")).toBeDefined();
    expect(patternError("a+/b")).toBeDefined();
    expect(patternError("")).toBeDefined();
    expect(patternError("+/+/#")).toBeUndefined();
  });
});

describe("filter schema", () => {
  it("requires type to equal change_to.type and validates each variant", () => {
    const bad = (d: unknown) => Schema.decodeUnknownEither(FilterDefinition)(d)._tag;
    expect(
      bad({ id: "f", type: "rename", target: { type: "always" }, change_to: { type: "sampling", interval_ms: 10 } }),
    ).toBe("Left");
    expect(
      bad({ id: "f", type: "sampling", target: { type: "always" }, change_to: { type: "sampling", interval_ms: 0 } }),
    ).toBe("Left");
    expect(
      bad({
        id: "f",
        type: "rename",
        target: { type: "name", patterns: [] },
        change_to: { type: "rename", name: "x" },
      }),
    ).toBe("Left");
    expect(
      bad({ id: "f", type: "rename", target: { type: "always" }, change_to: { type: "rename", name: "a//b" } }),
    ).toBe("Left");
    expect(
      bad({
        id: "f",
        type: "rename",
        target: { type: "src-id", patterns: ["dc-+"] },
        change_to: { type: "rename", name: "x" },
      }),
    ).toBe("Left");
    expect(
      bad({
        id: "f",
        type: "rename",
        target: { type: "src-id", patterns: ["dc-1"] },
        change_to: { type: "rename", add_prefix: "x/" },
      }),
    ).toBe("Right");
  });
});

describe("filters", () => {
  const batch = () => [
    point("1/a", "float64", "a", 0, "dc-1"),
    point("1/b", "string", "b", 0, "dc-1"),
    point("2/a", "float64", "c", 0, "dc-2"),
  ];

  it("target always / type / name / src-id select the points a change applies to", () => {
    const rename = (target: FilterDefinitionEncoded["target"]) =>
      names(
        new FilterPipeline([
          def({ id: "r", type: "rename", target, change_to: { type: "rename", add_prefix: "x/" } }),
        ]).apply(batch()),
      );
    expect(rename({ type: "always" })).toEqual(["x/1/a", "x/1/b", "x/2/a"]);
    expect(rename({ type: "type", patterns: ["float64"] })).toEqual(["x/1/a", "1/b", "x/2/a"]);
    expect(rename({ type: "name", patterns: ["+/a"] })).toEqual(["x/1/a", "1/b", "x/2/a"]);
    expect(rename({ type: "name", patterns: ["1/#"] })).toEqual(["x/1/a", "x/1/b", "2/a"]);
    expect(rename({ type: "src-id", patterns: ["dc-2"] })).toEqual(["1/a", "1/b", "x/2/a"]);
  });

  it("rename replaces the name, rewrites prefixes, changes the type, and refuses invalid names", () => {
    const run = (change_to: FilterDefinitionEncoded["change_to"]) => {
      const pl = new FilterPipeline([
        def({ id: "r", type: "rename", target: { type: "name", patterns: ["1/a"] }, change_to }),
      ]);
      return { out: pl.apply(batch()), stats: pl.stats.r! };
    };
    expect(names(run({ type: "rename", name: "gnss/lat" }).out)).toEqual(["gnss/lat", "1/b", "2/a"]);
    expect(names(run({ type: "rename", strip_prefix: "1/", add_prefix: "v1/9/" }).out)).toEqual([
      "v1/9/a",
      "1/b",
      "2/a",
    ]);
    const typed = run({ type: "rename", data_type: "float64/deg" }).out;
    expect(typed.map((p) => p.type)).toEqual(["float64/deg", "string", "float64"]);
    const invalid = run({ type: "rename", strip_prefix: "1/a" });
    expect(names(invalid.out)).toEqual(["1/a", "1/b", "2/a"]);
    expect(invalid.stats).toMatchObject({ matched: 1, invalid: 1, changed: 0 });
  });

  it("sampling keeps at most one point per interval per data id, across batches", () => {
    const pl = new FilterPipeline([
      def({ id: "s", type: "sampling", target: { type: "always" }, change_to: { type: "sampling", interval_ms: 100 } }),
    ]);
    const at = (name: string, ms: number) => point(name, "float64", "", ms * 1e6);
    const first = pl.apply([at("a", 0), at("a", 50), at("b", 60), at("a", 99), at("a", 100), at("b", 120)]);
    expect(first.map((p) => `${p.name}@${p.elapsedNs / 1e6}`)).toEqual(["a@0", "b@60", "a@100"]);
    const second = pl.apply([at("a", 150), at("b", 160), at("a", 205), at("a", 10)]);
    expect(second.map((p) => `${p.name}@${p.elapsedNs / 1e6}`)).toEqual(["b@160", "a@205", "a@10"]);
    expect(pl.stats.s).toMatchObject({ matched: 10, dropped: 4 });
    // Same name, different type: a different data id.
    expect(pl.apply([point("a", "string", "", 11e6)]).length).toBe(1);
  });

  it("filters apply in order: a rename is seen by the next filter's target", () => {
    const pl = new FilterPipeline([
      def({
        id: "r",
        type: "rename",
        target: { type: "name", patterns: ["raw"] },
        change_to: { type: "rename", name: "fast/x" },
      }),
      def({
        id: "s",
        type: "sampling",
        target: { type: "name", patterns: ["fast/#"] },
        change_to: { type: "sampling", interval_ms: 1000 },
      }),
    ]);
    const out = pl.apply([point("raw", "bytes", "", 0), point("raw", "bytes", "", 1), point("other", "bytes", "", 2)]);
    expect(names(out)).toEqual(["fast/x", "other"]);
  });

  it("updates at runtime: unchanged filters keep state, changed ones restart, no point is lost", () => {
    const sampling = def({
      id: "s",
      type: "sampling",
      target: { type: "always" },
      change_to: { type: "sampling", interval_ms: 100 },
    });
    const pl = new FilterPipeline([sampling]);
    expect(pl.apply([point("a", "t", "", 0)]).length).toBe(1);
    pl.update([
      sampling,
      def({ id: "r", type: "rename", target: { type: "always" }, change_to: { type: "rename", add_prefix: "p/" } }),
    ]);
    expect(names(pl.apply([point("a", "t", "", 50e6), point("b", "t", "", 50e6)]))).toEqual(["p/b"]); // state of "s" kept
    pl.update([def({ ...sampling, change_to: { type: "sampling", interval_ms: 10 } })]);
    expect(names(pl.apply([point("a", "t", "", 60e6)]))).toEqual(["a"]); // 60 ms after the last kept one (0)
    pl.update([
      def({
        id: "s",
        enabled: false,
        type: "sampling",
        target: { type: "always" },
        change_to: { type: "sampling", interval_ms: 10 },
      }),
    ]);
    expect(pl.apply([point("a", "t", "", 61e6), point("a", "t", "", 62e6)]).length).toBe(2);
  });
});

describe("sampling state across updates", () => {
  const sampling = (interval_ms: number, extra: object = {}) =>
    def({
      id: "s",
      type: "sampling",
      target: { type: "always" },
      change_to: { type: "sampling", interval_ms },
      ...extra,
    });

  it("keeps the per-data-id last-kept times through interval and target changes and disable/enable", () => {
    const pl = new FilterPipeline([sampling(100)]);
    expect(pl.apply([point("a", "t", "", 0), point("b", "t", "", 0)]).length).toBe(2);
    pl.update([sampling(200)]);
    // 150 ms after the last kept points: a new 200 ms interval does not let them through.
    expect(pl.apply([point("a", "t", "", 150e6), point("b", "t", "", 150e6)]).length).toBe(0);
    pl.update([def({ ...sampling(200), target: { type: "name", patterns: ["#"] } })]);
    expect(pl.apply([point("a", "t", "", 190e6)]).length).toBe(0);
    pl.update([sampling(200, { enabled: false })]);
    expect(pl.apply([point("a", "t", "", 195e6)]).length).toBe(1); // disabled: passes everything
    pl.update([sampling(200)]);
    expect(pl.apply([point("a", "t", "", 199e6)]).length).toBe(0); // enabled again: the old state holds
    expect(names(pl.apply([point("a", "t", "", 200e6)]))).toEqual(["a"]);
  });

  it("forgets the state of a deleted filter", () => {
    const pl = new FilterPipeline([sampling(100)]);
    expect(pl.apply([point("a", "t", "", 0)]).length).toBe(1);
    pl.update([]);
    pl.update([sampling(100)]);
    expect(pl.apply([point("a", "t", "", 10e6)]).length).toBe(1);
  });
});

describe("h264-essential-nal-units", () => {
  const nal = (type: number, body: number[], four = true) => [...(four ? [0, 0, 0, 1] : [0, 0, 1]), type, ...body];
  const sps = nal(0x67, [0x42, 0x00, 0x1f]);
  const pps = nal(0x68, [0xce, 0x3c, 0x80], false);
  const idr = nal(0x65, [0x88, 0x84, 0x00, 0x00, 0x03, 0x00, 0x21]);
  const nonIdr = nal(0x41, [0x9a, 0x00, 0x00, 0x00]); // trailing zero bytes before the next start code
  const sei = nal(0x06, [0x05, 0x01, 0x80]);
  const aud = nal(0x09, [0xf0]);
  const h264 = (name: string, bytes: number[]) => point(name, "h264_frame", Uint8Array.from(bytes), 0);
  const filter = (extra: object = {}) =>
    new FilterPipeline([
      def({
        id: "h",
        type: "h264-essential-nal-units",
        target: { type: "type", patterns: ["h264_frame/#"] },
        change_to: { type: "h264-essential-nal-units", ...extra },
      }),
    ]);

  it("splits Annex-B with 3- and 4-byte start codes", () => {
    const units = splitAnnexB(Uint8Array.from([...aud, ...sps, ...pps, ...idr]));
    expect(units.map((u) => u.type)).toEqual([9, 7, 8, 5]);
    expect(units.map((u) => u.end - u.start)).toEqual([aud.length, sps.length, pps.length, idr.length]);
  });

  it("keeps SPS, PPS and IDR slices, drops the rest, drops frames left empty", () => {
    const pl = filter();
    const out = pl.apply([
      h264("key", [...aud, ...sei, ...sps, ...pps, ...idr]),
      h264("delta", [...aud, ...nonIdr]),
      h264("ok", [...sps, ...pps, ...idr]),
      point("other", "bytes", Uint8Array.from(nonIdr), 0),
      h264("not-annexb", [1, 2, 3, 4]),
    ]);
    expect(names(out)).toEqual(["key", "ok", "other", "not-annexb"]);
    expect([...out[0]!.payload]).toEqual([...sps, ...pps, ...idr]);
    expect(pl.stats.h).toMatchObject({ matched: 4, dropped: 1, changed: 1 });
  });

  it("optionally keeps SEI and AUD", () => {
    const out = filter({ keep_sei: true, keep_aud: true }).apply([
      h264("key", [...aud, ...sei, ...nonIdr, ...sps, ...pps, ...idr]),
    ]);
    expect([...out[0]!.payload]).toEqual([...aud, ...sei, ...sps, ...pps, ...idr]);
  });
});
