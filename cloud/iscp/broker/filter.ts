// Downstream data filters: MQTT-like wildcards on `/` levels (iscp-go message/downstream_filter.go).
// `#` matches the rest (including no level, so `a/#` matches `a`), `+` exactly one level.

export type LevelPattern = readonly string[];

/** Returns the split pattern, or undefined when it is not a valid filter. */
export function compilePattern(p: string): LevelPattern | undefined {
  if (p === "") return undefined;
  const levels = p.split("/");
  for (let i = 0; i < levels.length; i++) {
    const l = levels[i]!;
    if (l === "#") {
      if (i !== levels.length - 1) return undefined;
    } else if (l.includes("#") || (l.includes("+") && l !== "+")) {
      return undefined;
    }
  }
  return levels;
}

export function matchPattern(pattern: LevelPattern, value: string): boolean {
  const v = value.split("/");
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i]!;
    if (p === "#") return true;
    if (i >= v.length) return false;
    if (p !== "+" && p !== v[i]) return false;
  }
  return v.length === pattern.length;
}

export interface CompiledDataFilter {
  name: LevelPattern;
  type: LevelPattern;
}

/** Matches DataIDs against a set of data filters, caching the answer per DataID. */
export class DataIdMatcher {
  private readonly cache = new Map<string, boolean>();
  constructor(private readonly filters: readonly CompiledDataFilter[]) {}

  matches(name: string, type: string): boolean {
    const key = `${type}\u0000${name}`;
    let hit = this.cache.get(key);
    if (hit === undefined) {
      hit = this.filters.some((f) => matchPattern(f.name, name) && matchPattern(f.type, type));
      if (this.cache.size >= 4096) this.cache.clear();
      this.cache.set(key, hit);
    }
    return hit;
  }
}
