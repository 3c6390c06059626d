// Checks the import rules of .dependency-cruiser.cjs over every folder of ours.
// Runs dependency-cruiser through its API rather than its command line, which
// refuses to start on Node 20 (the project supports Node >= 20.17).
import { existsSync } from "node:fs";
import { cruise } from "dependency-cruiser";
import extractDepcruiseOptions from "dependency-cruiser/config-utl/extract-depcruise-options";
import extractTSConfig from "dependency-cruiser/config-utl/extract-ts-config";

const FOLDERS = ["bin", "cloud", "runtime", "machines", "proto", "lib", "bench", "tests"];

const options = await extractDepcruiseOptions("./.dependency-cruiser.cjs");
const tsConfig = extractTSConfig(options.tsConfig?.fileName ?? "tsconfig.json");
const roots = FOLDERS.filter((f) => existsSync(f));
const result = await cruise(roots, { ...options, outputType: "err", validate: true }, {}, { tsConfig });
process.stdout.write(result.output);
process.exitCode = result.exitCode > 0 ? 1 : 0;
