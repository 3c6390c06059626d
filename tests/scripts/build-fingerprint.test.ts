// The test run builds dist/ only when the sources changed (tests/support/build-global-setup.ts): its
// fingerprint must change with any edit, addition or removal of a source, and only then.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { sourcesFingerprint } from "../support/build-global-setup.js";

let root: string;
beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), "build-fingerprint-"));
  fs.mkdirSync(path.join(root, "cloud", "http"), { recursive: true });
  fs.writeFileSync(path.join(root, "cloud", "http", "app.ts"), "export const a = 1;\n");
  fs.writeFileSync(path.join(root, "package-lock.json"), "{}\n");
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

describe("sources fingerprint", () => {
  it("stays the same while nothing changes, and ignores files outside the sources", () => {
    const before = sourcesFingerprint(root);
    fs.mkdirSync(path.join(root, "docs"));
    fs.writeFileSync(path.join(root, "docs", "notes.md"), "# notes\n");
    expect(sourcesFingerprint(root)).toBe(before);
  });

  it("changes when a source is edited, added or removed", () => {
    const app = path.join(root, "cloud", "http", "app.ts");
    const seen = new Set([sourcesFingerprint(root)]);
    fs.writeFileSync(app, "export const a = 22;\n");
    seen.add(sourcesFingerprint(root));
    fs.writeFileSync(path.join(root, "cloud", "http", "new.ts"), "export {};\n");
    seen.add(sourcesFingerprint(root));
    fs.rmSync(app);
    seen.add(sourcesFingerprint(root));
    fs.writeFileSync(path.join(root, "package-lock.json"), '{"lockfileVersion":3}\n');
    seen.add(sourcesFingerprint(root));
    expect(seen.size).toBe(5);
  });
});
