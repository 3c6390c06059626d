// H.264 Annex-B parsing for the `h264-essential-nal-units` filter.
// A payload is a byte stream of NAL units, each preceded by a start code 00 00 01 or 00 00 00 01.
// Emulation prevention (00 00 03) guarantees no start code occurs inside a NAL unit, so splitting
// at start codes is exact. nal_unit_type is the low 5 bits of the byte after the start code.

export const NAL_IDR = 5;
export const NAL_SEI = 6;
export const NAL_SPS = 7;
export const NAL_PPS = 8;
export const NAL_AUD = 9;

/** What a decoder needs to start decoding at this point: parameter sets and IDR slices. */
export const ESSENTIAL_NAL_TYPES: readonly number[] = [NAL_SPS, NAL_PPS, NAL_IDR];

export interface NalUnit {
  type: number;
  /** Offset of the start code (3 or 4 bytes) that begins this unit. */
  start: number;
  /** Offset after the unit (the next unit's start code, or the payload end). */
  end: number;
}

/** Finds the Annex-B NAL units of `data`; empty when there is no start code (not Annex-B). */
export function splitAnnexB(data: Uint8Array): NalUnit[] {
  const units: NalUnit[] = [];
  const n = data.length;
  let i = 0;
  let current = -1; // start code offset of the unit being scanned
  let currentType = 0;
  while (i + 2 < n) {
    if (data[i + 2]! > 1) {
      i += 3; // fast skip: no start code can end at i+2
      continue;
    }
    if (data[i] === 0 && data[i + 1] === 0 && data[i + 2] === 1) {
      const sc = i > 0 && data[i - 1] === 0 ? i - 1 : i; // 4-byte start code
      if (current >= 0) units.push({ type: currentType, start: current, end: sc });
      current = sc;
      currentType = i + 3 < n ? data[i + 3]! & 0x1f : 0;
      i += 3;
    } else i++;
  }
  if (current >= 0) units.push({ type: currentType, start: current, end: n });
  return units;
}

/**
 * Keeps only the NAL units whose type is in `keep`. Returns the payload itself when every unit is kept
 * (or it is not Annex-B), a new buffer with the kept units (their own start codes included) otherwise,
 * or undefined when no unit is left.
 */
export function keepNalUnits(data: Uint8Array, keep: ReadonlySet<number>): Uint8Array | undefined {
  const units = splitAnnexB(data);
  if (units.length === 0) return data;
  let size = 0;
  let kept = 0;
  for (const u of units) {
    if (keep.has(u.type)) {
      size += u.end - u.start;
      kept++;
    }
  }
  if (kept === units.length) return data;
  if (kept === 0) return undefined;
  const out = new Uint8Array(size);
  let off = 0;
  for (const u of units) {
    if (!keep.has(u.type)) continue;
    out.set(data.subarray(u.start, u.end), off);
    off += u.end - u.start;
  }
  return out;
}
