// The agent's folders get the modes the docs promise even when they exist before the agent: one of the agent's
// user is narrowed (never widened), one of another user is left alone with a warning naming it.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import { makeDir } from "../../runtime/private-files.js";

let dir: string;
beforeEach(() => void (dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-dirs-"))));
afterEach(() => {
  vi.restoreAllMocks();
  fs.rmSync(dir, { recursive: true, force: true });
});
const modeOf = (p: string) => fs.statSync(p).mode & 0o7777;

it("narrows an existing folder of the agent's user (0755, 0777) to the promised mode", () => {
  for (const [name, before, want, after] of [
    ["data", 0o755, 0o700, 0o700],
    ["queue", 0o777, 0o700, 0o700],
    ["socket", 0o777, 0o750, 0o750],
    ["narrower", 0o700, 0o750, 0o700],
  ] as const) {
    const p = path.join(dir, name);
    fs.mkdirSync(p);
    fs.chmodSync(p, before);
    expect(makeDir(p, want)).toBe(false);
    expect(modeOf(p), name).toBe(after);
  }
});

it.runIf(process.getuid?.() === 0)(
  "warns, naming the folder and its mode, when a wider folder belongs to another user",
  () => {
    const p = path.join(dir, "theirs");
    fs.mkdirSync(p);
    fs.chmodSync(p, 0o777);
    fs.chownSync(p, 65534, 65534);
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    makeDir(p, 0o700);
    expect(modeOf(p)).toBe(0o777);
    expect(warn).toHaveBeenCalledWith(
      expect.stringMatching(
        new RegExp(
          `^warning: ${p} has mode 0777 and belongs to uid 65534, not this user: others may read or change the agent's files there; make it 0700`,
        ),
      ),
    );
  },
);
