// Vitest global setup: the run's directory for what several test files build once (run-artefacts.ts), removed when
// the run ends. Nothing is built here: a run that needs no artefact pays nothing.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { ARTEFACTS_ENV } from "./run-artefacts.js";

export default function setup(): (() => void) | undefined {
  if (process.env[ARTEFACTS_ENV]) return undefined;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "test-run-artefacts-"));
  process.env[ARTEFACTS_ENV] = dir;
  return () => {
    fs.rmSync(dir, { recursive: true, force: true });
    delete process.env[ARTEFACTS_ENV];
  };
}
