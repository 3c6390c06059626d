// The console's settings: the map tiles an operator configures (--map-tiles-url), checked at start, and what the
// console reads of them.
import * as ParseResult from "effect/ParseResult";
import * as Schema from "effect/Schema";

/** The placeholders a tile URL must hold: the slippy-map (XYZ, Web Mercator) tile address. */
const PLACEHOLDERS = ["{z}", "{x}", "{y}"];

/** An http(s) URL template with {z}, {x} and {y}, e.g. `https://tiles.example.com/{z}/{x}/{y}.png`. */
export const MapTilesUrl = Schema.transformOrFail(Schema.Unknown, Schema.String, {
  strict: true,
  decode: (v, _, ast) => {
    const problem = (message: string) => ParseResult.fail(new ParseResult.Type(ast, v, message));
    if (typeof v !== "string" || v.trim() === "") return problem("expected an http(s) URL with {z}, {x} and {y}");
    const missing = PLACEHOLDERS.filter((p) => !v.includes(p));
    if (missing.length) return problem(`expected an http(s) URL with {z}, {x} and {y} (missing ${missing.join(", ")})`);
    let url: URL;
    try {
      url = new URL(tileUrl(v, 0, 0, 0));
    } catch {
      return problem("expected an http(s) URL with {z}, {x} and {y}");
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") return problem("expected an http: or https: URL");
    if (url.username || url.password) return problem("expected a URL without a user name or password");
    return ParseResult.succeed(v.trim());
  },
  encode: (s) => ParseResult.succeed(s),
});

/** The URL of one tile. */
export const tileUrl = (template: string, z: number, x: number, y: number) =>
  template.replaceAll("{z}", String(z)).replaceAll("{x}", String(x)).replaceAll("{y}", String(y));

/** The origin the console's pages may load tiles from (its Content-Security-Policy names it). */
export const tilesOrigin = (template: string) => new URL(tileUrl(template, 0, 0, 0)).origin;

export const ConsoleSettings = Schema.Struct({
  map_tiles: Schema.NullOr(Schema.Struct({ url: Schema.String, attribution: Schema.String })),
});
