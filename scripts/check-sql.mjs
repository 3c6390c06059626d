// SQL lives in the repositories (cloud/<area>/repo/) and the database layer
// (cloud/database/) only. This looks at string and template literals of the
// hand-written sources (comments and prose never match) for SQL statements.
// Tests are left out: they read the database directly to check what was stored.
import { readFileSync } from "node:fs";
import ts from "typescript";
import { SOURCE_FOLDERS, sourceFiles } from "./source-files.mjs";

const ALLOWED = [/^cloud\/(.+\/)?repo\//, /^cloud\/database\//];

// Upper-case keywords, in the order a statement has them, within one literal.
const STATEMENTS = [
  /\bSELECT\s[\s\S]*?\bFROM\s/,
  /\b(INSERT|REPLACE)\s+(OR\s+[A-Z]+\s+)?INTO\s/,
  /\bUPDATE\s+(OR\s+[A-Z]+\s+)?[\w".`]+\s+SET\s/,
  /\bDELETE\s+FROM\s/,
  /\bCREATE\s+(UNIQUE\s+|TEMP\s+|TEMPORARY\s+|VIRTUAL\s+)?(TABLE|INDEX|VIEW|TRIGGER)\s/,
  /\b(DROP|ALTER)\s+(TABLE|INDEX|VIEW|TRIGGER)\s/,
  /\bPRAGMA\s+\w+/,
];

/** Text of every string and template literal in a file, with its line (`_` for each ${...}). */
function literals(path, text) {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, false);
  const out = [];
  const add = (node, value) =>
    out.push({ line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1, value });
  const visit = (node) => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) add(node, node.text);
    else if (ts.isTemplateExpression(node))
      add(node, [node.head.text, ...node.templateSpans.map((s) => s.literal.text)].join(" _ "));
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

// Parsing is the slow part: only files with a keyword anywhere are parsed.
const KEYWORD = /\b(SELECT|INSERT|REPLACE|UPDATE|DELETE|CREATE|DROP|ALTER|PRAGMA)\b/;

const problems = [];
for (const path of sourceFiles(SOURCE_FOLDERS)) {
  if (ALLOWED.some((re) => re.test(path))) continue;
  const text = readFileSync(path, "utf8");
  if (!KEYWORD.test(text)) continue;
  for (const { line, value } of literals(path, text)) {
    const hit = STATEMENTS.map((re) => re.exec(value)).find(Boolean);
    if (hit) problems.push(`${path}:${line}: ${hit[0].replace(/\s+/g, " ").slice(0, 60)}`);
  }
}
if (problems.length > 0) {
  console.log(`SQL outside cloud/**/repo/ and cloud/database/ (move it into the area's repo/):`);
  for (const p of problems) console.log(`  ${p}`);
  console.log(`x ${problems.length} SQL statement(s) out of place`);
  process.exitCode = 1;
}
