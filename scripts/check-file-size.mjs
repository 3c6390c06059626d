// Hand-written source and test files stay at most 400 lines: a longer file
// usually does more than one job. Generated code (proto/gen) is left out.
import { readFileSync } from "node:fs";
import { SOURCE_FOLDERS, TEST_FOLDERS, sourceFiles } from "./source-files.mjs";

const MAX_LINES = 400;

const problems = [];
for (const path of sourceFiles([...SOURCE_FOLDERS, ...TEST_FOLDERS])) {
  const text = readFileSync(path, "utf8");
  const lines = text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
  if (lines > MAX_LINES) problems.push(`  ${path}: ${lines} lines`);
}
if (problems.length > 0) {
  console.log(`Files over ${MAX_LINES} lines (split them by job):`);
  console.log(problems.join("\n"));
  process.exitCode = 1;
}
