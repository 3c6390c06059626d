import { defineConfig } from "vitest/config";

// Tests start real servers, child processes and browsers: give them room, and run files
// in forked workers so a crashing native addon (sqlite3, lmdb) cannot take the runner down.
export default defineConfig({
  test: {
    include: ["tests/**/*.test.ts"],
    globalSetup: ["tests/support/build-global-setup.ts", "tests/support/postgres-global-setup.ts"],
    pool: "forks",
    testTimeout: 30_000,
    hookTimeout: 60_000,
    maxWorkers: 2,
  },
});
