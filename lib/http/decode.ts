// Decoding input through effect/Schema. The result lists every issue (path + message); each API words
// its own 400 from them.
import * as Either from "effect/Either";
import * as ParseResult from "effect/ParseResult";
import * as Schema from "effect/Schema";

export interface Issue {
  path: readonly PropertyKey[];
  message: string;
}

export type Decoded<A> = { ok: true; value: A } | { ok: false; issues: Issue[] };

/** A function each API gives: decodes or throws its own error, naming `where` (path, query, body). */

export function decodeInput<A, I>(
  schema: Schema.Schema<A, I, never>,
  input: unknown,
  onExcessProperty: "ignore" | "error",
): Decoded<A> {
  const result = Schema.decodeUnknownEither(schema, { errors: "all", onExcessProperty })(input);
  if (Either.isRight(result)) return { ok: true, value: result.right };
  try {
    return { ok: false, issues: ParseResult.ArrayFormatter.formatErrorSync(result.left) };
  } catch {
    // Formatting echoes the input; absurdly nested input (e.g. 5000 nested arrays) overflows the stack.
    return { ok: false, issues: [{ path: [], message: "invalid or too deeply nested value" }] };
  }
}
