// One line for a YAML syntax error, at the line a user has to fix. For an over-indented line the yaml package
// reports BLOCK_AS_IMPLICIT_KEY at the start of the value it tried to extend (the line before); the broken
// line is the one holding that value's `:` indicator, found with the package's own lexer.
import { CST, Lexer, YAMLError } from "yaml";

// Tokens the lexer adds that hold no source text: document start, flow error end, scalar start.
const SYNTHETIC = new Set([CST.DOCUMENT, CST.FLOW_END, CST.SCALAR]);

/** The error's first line, its position moved to the broken line where the package points before it. */
export function yamlErrorLine(e: unknown, text: string): string {
  const first = (e as Error).message.split("\n")[0]!.replace(/:$/, "");
  if (!(e instanceof YAMLError) || e.code !== "BLOCK_AS_IMPLICIT_KEY") return first;
  const at = indicatorAfter(text, e.pos[0]);
  if (at === undefined) return first;
  const before = text.slice(0, at);
  const line = before.split("\n").length;
  const column = at - before.lastIndexOf("\n");
  return first.replace(/ at line \d+, column \d+$/, ` at line ${line}, column ${column}`);
}

/** The offset of the first `:` mapping indicator at or after `from`. */
function indicatorAfter(text: string, from: number): number | undefined {
  let offset = 0;
  for (const token of new Lexer().lex(text)) {
    if (SYNTHETIC.has(token)) continue;
    if (offset >= from && CST.tokenType(token) === "map-value-ind") return offset;
    offset += token.length;
  }
  return undefined;
}
