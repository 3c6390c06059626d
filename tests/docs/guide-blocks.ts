// The `sh` blocks of a guide under docs/guide/, each with its kind (```sh test, ```sh root, ...), in order.
import fs from "node:fs";
import path from "node:path";
import { ROOT } from "../deploy/unit-file.js";

export function guideBlocks(file: string) {
  const guide = fs.readFileSync(path.join(ROOT, "docs/guide", file), "utf8");
  const blocks = [...guide.matchAll(/^```sh( \w+)?\n([\s\S]*?)^```$/gm)].map((m) => ({ kind: m[1]?.trim() ?? "", text: m[2]! }));
  return { guide, blocks, testBlocks: blocks.filter((b) => b.kind === "test").map((b) => b.text) };
}
