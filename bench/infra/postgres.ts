// A real PostgreSQL 15 server for tests and benches: initdb in a temp directory, started on a free port with its unix
// socket in that directory, as the `postgres` OS user when we are root (PostgreSQL refuses to run as root).
// Databases are made per test (createDatabase); stop() stops the server by its data directory and removes it all.
import { execFileSync, spawnSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import pg from "pg";

/** Where Debian's postgresql-15 puts its binaries (PG_BIN overrides). */
const BIN = process.env.PG_BIN ?? "/usr/lib/postgresql/15/bin";
const SUPERUSER = "postgres";

export interface PgServer {
  /** The directory holding the data directory, the socket and the log (removed by stop()). */
  dir: string;
  port: number;
  /** `postgres://postgres@127.0.0.1:PORT/NAME`: the server trusts local connections, no password. */
  urlOf(database: string): string;
  /** A new empty database (name: letters, digits, underscores); returns its URL. */
  createDatabase(name?: string): Promise<string>;
  dropDatabase(name: string): Promise<void>;
  /** Stops the server (fast shutdown: clients are cut), keeping its data, to be started again by resume(). */
  halt(): void;
  /** Starts the halted server again on the same port. */
  resume(): void;
  stop(): void;
}

const asRoot = process.getuid?.() === 0;

/** Runs a PostgreSQL binary, as the postgres user when we are root. */
function runPg(bin: string, args: string[]): void {
  const [cmd, argv] = asRoot
    ? ["runuser", ["-u", SUPERUSER, "--", path.join(BIN, bin), ...args]]
    : [path.join(BIN, bin), args];
  const r = spawnSync(cmd, argv, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  if (r.status !== 0) throw new Error(`${bin} ${args.join(" ")} failed (${r.status}): ${r.stdout}${r.stderr}`);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/** Whether PostgreSQL's binaries are here (the tests that need them say so when they are not). */
export const postgresInstalled = () => fs.existsSync(path.join(BIN, "postgres"));

export async function startPostgres(): Promise<PgServer> {
  // Under /tmp rather than os.tmpdir(): the postgres user must reach it, and a TMPDIR inside root's home would not do.
  const dir = fs.mkdtempSync(path.join(asRoot ? "/tmp" : os.tmpdir(), "pg-test-"));
  const data = path.join(dir, "data");
  if (asRoot) execFileSync("chown", [SUPERUSER, dir]);
  let port = 0;
  let opts = "";
  const start = () =>
    runPg("pg_ctl", [
      "start",
      "-w",
      "-t",
      "60",
      "-D",
      data,
      "-l",
      path.join(dir, "log"),
      "-o",
      `-p ${port} -c listen_addresses=127.0.0.1 ${opts}`,
    ]);
  try {
    // C locale: text sorts by bytes, as SQLite's BINARY collation does.
    runPg("initdb", ["-D", data, "-U", SUPERUSER, "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"]);
    // A test server: durability is not what is tested here, speed is.
    opts = `-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300 -c unix_socket_directories=${dir}`;
    for (let attempt = 0; ; attempt++) {
      port = await freePort();
      try {
        start();
        break;
      } catch (e) {
        // Another process took the port between our probe and the server's bind.
        if (attempt >= 2) throw e;
      }
    }
  } catch (e) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  const urlOf = (database: string) => `postgres://${SUPERUSER}@127.0.0.1:${port}/${database}`;
  const admin = async <T>(fn: (c: pg.Client) => Promise<T>) => {
    const c = new pg.Client({ connectionString: urlOf("postgres") });
    await c.connect();
    try {
      return await fn(c);
    } finally {
      await c.end();
    }
  };
  let stopped = false;
  return {
    dir,
    port,
    urlOf,
    async createDatabase(name = `t_${crypto.randomBytes(8).toString("hex")}`) {
      if (!/^\w+$/.test(name)) throw new Error(`bad database name ${name}`);
      await admin((c) => c.query(`CREATE DATABASE ${name}`));
      return urlOf(name);
    },
    async dropDatabase(name) {
      if (!/^\w+$/.test(name)) throw new Error(`bad database name ${name}`);
      await admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
    halt() {
      runPg("pg_ctl", ["stop", "-w", "-m", "fast", "-D", data]);
    },
    resume: start,
    stop() {
      if (stopped) return;
      stopped = true;
      try {
        if (fs.existsSync(path.join(data, "postmaster.pid")))
          runPg("pg_ctl", ["stop", "-w", "-m", "immediate", "-D", data]);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
