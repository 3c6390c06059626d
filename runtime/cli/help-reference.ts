// The reference at the end of `agentctl --help`: every command with its options, and the fields of a device
// connector, both made from what the program and the settings' Schemas are, so the help cannot drift from them.
import type { Command } from "commander";
import * as Schema from "effect/Schema";
import * as SchemaAST from "effect/SchemaAST";

/** Every command and sub-command, each with its own options. */
export function commandReference(program: Command): string {
  const lines: string[] = [];
  const walk = (cmd: Command, path: string) => {
    for (const sub of cmd.commands) {
      if (sub.name() === "help") continue;
      const args = sub.registeredArguments.map((a) =>
        a.required ? `<${a.name()}>` : `[${a.name()}${a.variadic ? "..." : ""}]`,
      );
      const here = `${path} ${sub.name()}`;
      lines.push(`  ${[here, ...args].join(" ")}${sub.description() ? `  ${sub.description()}` : ""}`);
      for (const o of sub.options) lines.push(`      ${o.flags}  ${o.description}`);
      walk(sub, here);
    }
  };
  walk(program, program.name());
  return lines.join("\n");
}

/** A type as the help names it: `string`, `a|b`, `string[]`, `object`. */
function typeName(ast: SchemaAST.AST): string {
  switch (ast._tag) {
    case "Refinement":
      return typeName(ast.from);
    case "Transformation":
      return typeName(ast.from);
    case "Suspend":
      return typeName(ast.f());
    case "Union":
      return ast.types
        .filter((t) => t._tag !== "UndefinedKeyword")
        .map(typeName)
        .join("|");
    case "Literal":
      return String(ast.literal);
    case "TupleType":
      return ast.rest.length > 0 ? `${typeName(ast.rest[0]!.type)}[]` : "array";
    case "TypeLiteral":
      return ast.indexSignatures.length > 0 ? "{NAME: string}" : "object";
    default:
      return ast._tag.replace(/Keyword$/, "").toLowerCase();
  }
}

/** The struct inside refinements and optionality, when the type is one. */
function structOf(ast: SchemaAST.AST): SchemaAST.TypeLiteral | undefined {
  if (ast._tag === "Refinement") return structOf(ast.from);
  if (ast._tag === "Union") {
    const members = ast.types.filter(
      (t) => t._tag !== "UndefinedKeyword" && !(t._tag === "Literal" && t.literal === null),
    );
    return members.length === 1 ? structOf(members[0]!) : undefined;
  }
  return ast._tag === "TypeLiteral" && ast.propertySignatures.length > 0 ? ast : undefined;
}

/** One line per field (nested objects as `a.b`), with its type and whether it may be left out. */
export function fieldReference(schema: Schema.Schema.AnyNoContext): string {
  const lines: string[] = [];
  const walk = (ast: SchemaAST.TypeLiteral, prefix: string) => {
    for (const p of ast.propertySignatures) {
      const name = `${prefix}${String(p.name)}`;
      const nested = structOf(p.type);
      if (nested && p.isOptional) lines.push(`  ${name}: object (optional)`);
      if (nested) walk(nested, `${name}.`);
      else lines.push(`  ${name}: ${typeName(p.type)}${p.isOptional ? " (optional)" : ""}`);
    }
  };
  const root = structOf(Schema.encodedSchema(schema).ast);
  if (root) walk(root, "");
  return lines.join("\n");
}
