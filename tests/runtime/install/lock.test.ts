// A plain `npm ci` (development included) installs what package-lock.json lists: none of the blockchain
// libraries that the test-only @aptpod/iscp-ts once pulled in through its URL-join dependency (a fork
// depending on web3; package.json overrides it with the original url-join).
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../../..");

it("locks no web3, keccak or secp256k1 package, not even for development", () => {
  const lock = JSON.parse(fs.readFileSync(path.join(ROOT, "package-lock.json"), "utf8")) as {
    packages: Record<string, unknown>;
  };
  const names = Object.keys(lock.packages).map((p) => p.slice(p.lastIndexOf("node_modules/") + "node_modules/".length));
  expect(names).toContain("@aptpod/iscp-ts");
  expect(names.filter((n) => /^(web3|web3-.*|keccak|secp256k1|ethereumjs-.*|@ethereumjs\/.*)$/.test(n))).toEqual([]);
});
