// Checks the import rules of .dependency-cruiser.cjs over every folder of ours.
// One call over every folder that exists (bench/, tests/ and lib/ included); the same rules also hold for
// `npx depcruise --validate --output-type err cloud runtime machines proto`.
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
