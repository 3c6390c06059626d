// Which data IDs the data endpoint returns: `idq[]` (intdash's glob form) and `data_id_filter` (the
// iSCP data-filter form the intdash SDK sends, e.g. `#:1/gnss_coordinates`). Both are lists of
// `<data_type>:<data_name>` entries; an entry matches when both sides do, a list when any entry does.

export type DataIdMatch = (type: string, name: string) => boolean;

function globToRegExp(glob: string, within = false): RegExp {
  const any = within ? "[^/]*" : ".*";
  return new RegExp(
    `^${glob
      .split("*")
      .map((s) => s.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
      .join(any)}$`,
  );
}

/** `idq[]` entries are `<data_type>:<data_name>` with `*` wildcards; a bare `<data_type>` means any name. */
export function compileIdq(idq: readonly string[] | undefined): DataIdMatch | undefined {
  if (!idq?.length) return undefined;
  const tests = idq.map((q) => {
    const i = q.indexOf(":");
    const type = globToRegExp(i < 0 ? q : q.slice(0, i));
    const name = globToRegExp(i < 0 ? "*" : q.slice(i + 1));
    return (t: string, n: string) => type.test(t) && name.test(n);
  });
  return (t, n) => tests.some((f) => f(t, n));
}

/**
 * One side of a data_id_filter entry, as iSCP data filters read it: levels split on `/`, `#` as the
 * last level matches that level and all that follow (so `#` alone matches anything), `+` matches
 * exactly one level, and `*` inside a level matches any run of characters within that level.
 */
type Level = { kind: "rest" } | { kind: "one" } | { kind: "text"; text: string } | { kind: "glob"; re: RegExp };

function patternProblem(p: string): string | undefined {
  if (p === "") return "is empty";
  const levels = p.split("/");
  for (const [i, l] of levels.entries()) {
    if (l.includes("#") && (l !== "#" || i !== levels.length - 1)) return "uses `#` other than as its whole last level";
    if (l.includes("+") && l !== "+") return "uses `+` other than as a whole level";
  }
  return undefined;
}

function compileSide(p: string): (value: string) => boolean {
  if (p === "#") return () => true;
  if (!/[#+*]/.test(p)) return (v) => v === p;
  const levels: Level[] = p
    .split("/")
    .map((l) =>
      l === "#"
        ? { kind: "rest" }
        : l === "+"
          ? { kind: "one" }
          : l.includes("*")
            ? { kind: "glob", re: globToRegExp(l, true) }
            : { kind: "text", text: l },
    );
  return (value) => {
    const v = value.split("/");
    for (const [i, l] of levels.entries()) {
      if (l.kind === "rest") return true;
      if (i >= v.length) return false;
      if (l.kind === "text" ? l.text !== v[i] : l.kind === "glob" ? !l.re.test(v[i]!) : false) return false;
    }
    return v.length === levels.length;
  };
}

/** Splits an entry at its first `:`; without one, the entry names a type and any name matches. */
function sides(entry: string): [string, string] {
  const i = entry.indexOf(":");
  return i < 0 ? [entry, "#"] : [entry.slice(0, i), entry.slice(i + 1)];
}

/** Why a data_id_filter entry cannot be used, or undefined when it can. */
export function dataIdFilterProblem(entry: string): string | undefined {
  const [type, name] = sides(entry);
  const t = patternProblem(type);
  if (t) return `the data type of ${JSON.stringify(entry)} ${t}`;
  const n = patternProblem(name);
  return n ? `the data name of ${JSON.stringify(entry)} ${n}` : undefined;
}

export function compileDataIdFilter(entries: readonly string[] | undefined): DataIdMatch | undefined {
  if (!entries?.length) return undefined;
  const tests = entries.map((e) => {
    const [type, name] = sides(e);
    const t = compileSide(type);
    const n = compileSide(name);
    return (ty: string, na: string) => t(ty) && n(na);
  });
  return (t, n) => tests.some((f) => f(t, n));
}

/** Both filters narrow: a data ID must pass each one given. */
export function bothMatch(a: DataIdMatch | undefined, b: DataIdMatch | undefined): DataIdMatch | undefined {
  if (!a || !b) return a ?? b;
  return (t, n) => a(t, n) && b(t, n);
}
