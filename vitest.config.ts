import { defineConfig } from "vitest/config";

// Tests start real servers, child processes and browsers: give them room, and run files
// in forked workers so a crashing native addon (sqlite3, lmdb) cannot take the runner down.
//
// Two projects: every test on the default backend (SQLite), and the cloud tests again with their peers on
// PostgreSQL (CLOUD_TEST_DATABASE=postgres; one server for the run, a database per peer). Left out of the
// second: tests of what only SQLite has (its files, pragmas, payload files and the
// full disks simulated through them, backup/restore of the data directory).
const SQLITE_ONLY = [
  "tests/cloud/database/db.test.ts",
  "tests/cloud/database/durability.test.ts",
  "tests/cloud/database/mode.test.ts",
  "tests/cloud/database/backup-cli.test.ts",
  "tests/cloud/database/backup-journal.test.ts",
  "tests/cloud/database/restore-checks.test.ts",
  "tests/cloud/database/downgrade.test.ts",
  "tests/cloud/measurements/payload-files.test.ts",
  "tests/cloud/measurements/payload-crash.test.ts",
  // The ingest journal is SQLite's.
  "tests/cloud/measurements/ingest-journal*.test.ts",
  "tests/cloud/measurements/payload-migration.test.ts",
  "tests/cloud/measurements/storage-full-log.test.ts",
  "tests/cloud/measurements/storage-full-batch.test.ts",
  "tests/cloud/measurements/stream-known-rows.test.ts",
  "tests/cloud/ops/health.test.ts",
  // Maintenance commands on a data directory, and their refusal of a wrong one.
  "tests/cloud/accounts/cli.test.ts",
  "tests/cloud/accounts/admin-recovery.test.ts",
  "tests/cloud/oauth/keys-cli.test.ts",
  // Starts a PostgreSQL of its own: once is enough.
  "tests/cloud/database/postgres.test.ts",
  "tests/cloud/database/pg-serial.test.ts",
  "tests/cloud/database/migrate-store.test.ts",
  "tests/cloud/database/migrate-live.test.ts",
  "tests/cloud/database/postgres-cli.test.ts",
  "tests/cloud/database/pg-connection-loss.test.ts",
  // Several peers on a PostgreSQL and a nats-server of their own (tests/cloud/cluster/helpers.ts): once is enough.
  "tests/cloud/cluster/shared-state.test.ts",
  "tests/cloud/cluster/iscp-relay.test.ts",
  // Stops and starts a PostgreSQL of its own.
  "tests/cloud/cluster/postgres-outage.test.ts",
];

// The PostgreSQL project runs a cloud test again only when its outcome can depend on the store. Left out, besides
// SQLITE_ONLY: tests that open no cloud database at all (on PostgreSQL they would run the very same code again):
// the iSCP broker on its own (tests/support/iscp-broker.ts), peers the test starts on SQLite itself, configuration.
const NO_CLOUD_DATABASE = [
  "tests/cloud/iscp/{ack-frame,broker,compression,connect-backlog,data-id-rules,duplicates}.test.ts",
  "tests/cloud/iscp/{filter,frame-limits,interop-iscp-ts,metadata-notices,pong-while-behind}.test.ts",
  "tests/cloud/iscp/{rate-meter,store-backpressure,store-budget,stream-limits}.test.ts",
  "tests/cloud/measurements/{chunk-points,events-throttle,format}.test.ts",
  "tests/cloud/measurements/ingest/{known-rows,journal,journal-records}.test.ts",
  "tests/cloud/accounts/logs.test.ts",
  "tests/cloud/oauth/secrets.test.ts",
  "tests/cloud/ops/access-log.test.ts",
  "tests/cloud/config/config-file.test.ts",
];
// Tests of a layer in front of the store, whose answers are decided before the store is asked: TLS and the
// certificates, HTTP connection limits and WebSocket upgrades, the sign-in back-off and limits (kept in
// memory), the browser's sign-in flow, the console's settings, the OpenAPI document and operation names.
const IN_FRONT_OF_STORE = [
  "tests/cloud/ops/{tls,tls-front}.test.ts",
  "tests/cloud/iscp/{quic-cert-files,upgrade-sockets}.test.ts",
  "tests/cloud/http/connection-limits.test.ts",
  "tests/cloud/oauth/{password-backoff,security-sign-in-limits,browser-flow,token-spellings}.test.ts",
  "tests/cloud/console/settings.test.ts",
  "tests/cloud/{accounts,measurements}/openapi.test.ts",
  "tests/cloud/org/operations.test.ts",
];

// The quick loop (`npm run test:quick`): unit tests that start no child process, browser or database and
// need no build. Everything else needs the build (tests/support/build-global-setup.ts, once per run).
const QUICK = [
  "tests/proto/wire/*.test.ts",
  "tests/proto/transport/ws/*.test.ts",
  "tests/machines/{connection,filter-deferred,stream}.test.ts",
  "tests/runtime/filters/*.test.ts",
  "tests/runtime/throttled-data.test.ts",
  "tests/runtime/queue/chunk-codec.test.ts",
  "tests/runtime/cli/agent-config-file.test.ts",
  "tests/lib/log-text.test.ts",
  "tests/runtime/link-events.test.ts",
  "tests/cloud/iscp/{filter,rate-meter}.test.ts",
  "tests/cloud/measurements/{chunk-points,data-id-rules,events-throttle,format,series-json-fields,series}.test.ts",
  "tests/cloud/measurements/ingest/{known-rows,journal,journal-records}.test.ts",
  "tests/cloud/oauth/secrets.test.ts",
  "tests/cloud/ops/access-log.test.ts",
  "tests/scripts/build-fingerprint.test.ts",
  "tests/bench/edges-schedule.test.ts",
];
const BUILD = "tests/support/build-global-setup.ts";
// The run's directory for the npm tarball and the Debian packages, made once for the files that need them.
const ARTEFACTS = "tests/support/artefacts-global-setup.ts";
const RESTORE_GLOBALS = "tests/support/restore-globals.ts";
// With TEST_CPU_LOG=FILE: a line per test file of the sqlite and postgres projects with the CPU-seconds it spent
// (tests/support/cpu-log.ts; the quick project's files share threads of one process, which /proc does not tell apart).
const CPU_LOG = process.env.TEST_CPU_LOG ? ["tests/support/cpu-log.ts"] : [];

// Files of the sqlite and postgres projects share worker processes (`isolate: false`): a worker runs file after
// file, and the cloud's module graph is loaded once per worker instead of once per file (about a quarter of the
// suite's CPU). So a file must leave the process as it found it: what it starts, it stops (peers, servers, child
// processes), and a global it replaces is put back after it (tests/support/restore-globals.ts; @aptpod/iscp-ts
// replaces the web streams, and Node's fetch then stalls on larger bodies). Modules keep their state from file to
// file (vi.mock is not reset either): a test never relies on a module's state being fresh, and what the cloud keeps
// in a module serves every peer the process starts, so it is the same for all of them or kept per peer.
//
// Limits are generous so that the suite passes on a busy machine (CI runs it once beside two busy processes):
// a test that goes right ends as soon as it is done, the limits only bound one that hangs. expect.poll and
// the tests' own waits (waitFor, eventually, until) allow 30 s.
const common = {
  pool: "forks" as const,
  isolate: false,
  setupFiles: [RESTORE_GLOBALS, ...CPU_LOG],
  testTimeout: 120_000,
  hookTimeout: 180_000,
  expect: { poll: { timeout: 30_000 } },
};

export default defineConfig({
  test: {
    // Four test files at a time on a two-core machine: a test file spends much of its time waiting (on child
    // processes, browsers, timers, the database); with two at a time the suite used at most three quarters of
    // the CPU.
    maxWorkers: 4,
    projects: [
      // The QUICK files run once, in the quick project (npm test runs it too), not again here.
      {
        test: {
          ...common,
          name: "sqlite",
          include: ["tests/**/*.test.ts"],
          exclude: QUICK,
          globalSetup: [BUILD, ARTEFACTS],
        },
      },
      {
        test: {
          ...common,
          name: "postgres",
          include: ["tests/cloud/**/*.test.ts"],
          exclude: [...SQLITE_ONLY, ...NO_CLOUD_DATABASE, ...IN_FRONT_OF_STORE],
          env: { CLOUD_TEST_DATABASE: "postgres" },
          globalSetup: [BUILD, "tests/support/postgres-global-setup.ts"],
        },
      },
      // Threads for these small files, which start nothing.
      { test: { ...common, name: "quick", include: QUICK, pool: "threads", setupFiles: [RESTORE_GLOBALS] } },
    ],
  },
});
