// iSCP-style topic patterns: levels separated by `/`, `+` matches exactly one level,
// `#` matches zero or more trailing levels and must be the last level.
// Used by filter targets (`type`, `name`, `src-id`) and downstream data filters.

/** Returns an error message, or undefined when `pattern` is a valid wildcard pattern. */
export function patternError(pattern: string): string | undefined {
  if (pattern.length === 0) return "pattern must not be empty";
  const levels = pattern.split("/");
  for (let i = 0; i < levels.length; i++) {
    const level = levels[i]!;
    if (level.includes("#") && (level !== "#" || i !== levels.length - 1)) {
      return "`#` must be a whole level and the last one";
    }
    if (level.includes("+") && level !== "+") return "`+` must be a whole level";
  }
  return undefined;
}

// The data-name rules are the ones every ingest path applies, cloud side too.
export { dataNameError } from "../../proto/wire/data-id-rules.js";

/** A compiled matcher; patterns without wildcards compare by string equality (the hot path). */
export type Matcher = (value: string) => boolean;

export function compilePattern(pattern: string): Matcher {
  if (!pattern.includes("#") && !pattern.includes("+")) return (v) => v === pattern;
  if (pattern === "#") return () => true;
  const levels = pattern.split("/");
  const multi = levels[levels.length - 1] === "#";
  const fixed = multi ? levels.slice(0, -1) : levels;
  return (value) => {
    const parts = value.split("/");
    if (multi ? parts.length < fixed.length : parts.length !== fixed.length) return false;
    for (let i = 0; i < fixed.length; i++) {
      const f = fixed[i]!;
      if (f !== "+" && f !== parts[i]) return false;
    }
    return true;
  };
}

/** Matches when any of the patterns matches. */
export function compilePatterns(patterns: readonly string[]): Matcher {
  const ms = patterns.map(compilePattern);
  if (ms.length === 1) return ms[0]!;
  return (v) => {
    for (const m of ms) if (m(v)) return true;
    return false;
  };
}
