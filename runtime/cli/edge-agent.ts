// The `edge-agent` command line: options, help and version in the style of agentctl and cloud-peer
// (commander). The daemon's code (runtime/daemon.ts) is loaded only to start it, so --help and --version
// answer at once. `edge-agent bench` and `edge-agent backup` have their own options (runtime/device-bench/cli.ts,
// runtime/cli/agent-backup.ts).
import fs from "node:fs";
import { Command, Option } from "commander";
import { PACKAGE_VERSION } from "../../lib/package-paths.js";

export const DEFAULT_SOCKET = "./data/agent/agent.sock";
export const DEFAULT_DATA = "./data/agent";
const LOG_FORMATS = ["json", "text"];
const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];

const ENV_VARS: [string, string][] = [
  ["AGENT_SOCKET", `command API socket (default ${DEFAULT_SOCKET}; production /var/run/edge-agent/agent.sock)`],
  ["AGENT_DATA", `settings and data directory (default ${DEFAULT_DATA}; production /var/lib/edge-agent)`],
  [
    "AGENT_CONFIG",
    "YAML file of settings (agentctl config-file show's shape) applied at start and on SIGHUP (as --config)",
  ],
  ["AGENT_LOG_LEVEL", `pino log level: ${LOG_LEVELS.join(", ")} (default info)`],
  ["AGENT_LOG_FORMAT", "json (default: one JSON object a line) or text (one readable line each)"],
  ["AGENT_QUIC_CA", "PEM file of the CA that signed the cloud's QUIC certificate (default: not verified)"],
  [
    "NODE_EXTRA_CA_CERTS",
    "PEM file of a private CA that signed the cloud's HTTPS certificate (read by Node: HTTPS and WebSocket trust it too)",
  ],
  [
    "AGENT_ALLOW_DIRS",
    "colon-separated directories device connectors' programs and FIFOs may come from (as --allow-dir)",
  ],
  [
    "AGENT_ALLOW_ENV",
    "comma-separated variables connectors may be given beyond TZ, LANG, LC_*, CONNECTOR_* (as --allow-env)",
  ],
  [
    "AGENT_METRICS",
    "on (default) or off: no Prometheus metrics at all (GET /api/v1/metrics answers 404), to measure what they cost",
  ],
  [
    "AGENT_METRICS_LISTEN",
    "host:port serving GET /metrics (Prometheus) to anyone who reaches it (default: off; the socket serves GET /api/v1/metrics)",
  ],
];

interface DaemonFlags {
  socket?: string;
  data?: string;
  config?: string;
  logLevel?: string;
  logFormat?: string;
  quicCa?: string;
  allowDir?: string[];
  allowEnv?: string[];
  metricsListen?: string;
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

class UsageError extends Error {}
/** A configuration file refused at start: each problem names the file's line and the field. */
class RefusedConfig extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join("\n"));
  }
}

function buildProgram(run: (flags: DaemonFlags) => Promise<void>): Command {
  const program = new Command("edge-agent")
    .description(
      "Edge agent: takes data from device connectors, keeps it on disk and streams it to the cloud over iSCP v2",
    )
    .version(PACKAGE_VERSION)
    .option("-s, --socket <path>", `command API socket (env AGENT_SOCKET) (default: "${DEFAULT_SOCKET}")`)
    .option("-d, --data <dir>", `settings and data directory (env AGENT_DATA) (default: "${DEFAULT_DATA}")`)
    .option(
      "-c, --config <file>",
      "YAML file of settings (the shape of agentctl config-file show) applied at start and on SIGHUP; what it names wins over the API's changes (env AGENT_CONFIG)",
    )
    .addOption(new Option("--log-level <level>", "pino log level (env AGENT_LOG_LEVEL)").choices(LOG_LEVELS))
    .addOption(
      new Option(
        "--log-format <format>",
        "json: one JSON object a line; text: one readable line (env AGENT_LOG_FORMAT)",
      ).choices(LOG_FORMATS),
    )
    .option("--quic-ca <file>", "PEM file of the CA that signed the cloud's QUIC certificate (env AGENT_QUIC_CA)")
    .option(
      "--allow-dir <dir>",
      "(repeatable) a directory device connectors' programs and FIFOs may come from, beyond the agent's data and IPC directories and /var/run/intdash{,2} (env AGENT_ALLOW_DIRS)",
      collect,
    )
    .option(
      "--allow-env <name>",
      "(repeatable) a variable (or a prefix ending in *) connectors may be given beyond TZ, LANG, LANGUAGE, LC_*, CONNECTOR_*: in launch.environment, and from the agent's own environment (env AGENT_ALLOW_ENV)",
      collect,
    )
    .option(
      "--metrics-listen <host:port>",
      "also serve GET /metrics (Prometheus) on this address, to anyone who reaches it (env AGENT_METRICS_LISTEN)",
    )
    .exitOverride()
    .configureOutput({ outputError: (str, write) => write(`edge-agent: ${str.replace(/^error: /, "")}`) })
    .showHelpAfterError("usage: edge-agent [options] (edge-agent --help)")
    .action((flags: DaemonFlags) => run(flags));
  // Listed for the help only: main() hands `bench` and `backup` with their own options to their files before parsing.
  program
    .command("bench")
    .description("measure this device end to end: points/s, MB/s, latency, CPU and memory (edge-agent bench --help)");
  program
    .command("backup")
    .description(
      "copy the settings and the data queue of a (running) agent to a new directory (edge-agent backup --help)",
    );
  program.addHelpText("after", () => {
    const width = Math.max(...ENV_VARS.map(([name]) => name.length));
    return (
      "\nEvery command and option:\n" +
      "  edge-agent [--socket <path>] [--data <dir>] [--config <file>] [--log-level <level>] [--log-format json|text] [--quic-ca <file>] [--allow-dir <dir>]... [--allow-env <name>]... [--metrics-listen <host:port>]\n" +
      "  edge-agent bench [--server URL] [--duration S] [--payload BYTES] [--rate N] [--transport websocket|quic] [--target-rate N] [--wide] (edge-agent bench --help)\n" +
      "  edge-agent backup [--data <dir>] --to <path> (edge-agent backup --help)\n" +
      "\nEnvironment (flags win over the environment):\n" +
      ENV_VARS.map(([name, what]) => `  ${name.padEnd(width)}  ${what}`).join("\n") +
      "\n"
    );
  });
  return program;
}

/** `host:port` of --metrics-listen (host defaults to 127.0.0.1); a bad value is a usage error. */
function hostPort(v: string | undefined): { host: string; port: number } | undefined {
  if (v === undefined || v === "") return undefined;
  const idx = v.lastIndexOf(":");
  const port = Number(v.slice(idx + 1));
  if (!/^\d+$/.test(v.slice(idx + 1)) || port > 65535)
    throw new UsageError(`--metrics-listen / AGENT_METRICS_LISTEN "${v}": expected host:port`);
  return { host: idx > 0 ? v.slice(0, idx).replace(/^\[|\]$/g, "") : "127.0.0.1", port };
}

async function runDaemon(flags: DaemonFlags): Promise<void> {
  const level = flags.logLevel ?? process.env.AGENT_LOG_LEVEL ?? "info";
  if (!LOG_LEVELS.includes(level))
    throw new UsageError(`AGENT_LOG_LEVEL "${level}" is not one of ${LOG_LEVELS.join(", ")}`);
  const logFormat = flags.logFormat ?? process.env.AGENT_LOG_FORMAT ?? "json";
  if (!LOG_FORMATS.includes(logFormat)) throw new UsageError(`AGENT_LOG_FORMAT "${logFormat}": expected json or text`);
  const metricsListen = hostPort(flags.metricsListen ?? process.env.AGENT_METRICS_LISTEN);
  const metricsSetting = process.env.AGENT_METRICS ?? "on";
  if (metricsSetting !== "on" && metricsSetting !== "off")
    throw new UsageError(`AGENT_METRICS "${metricsSetting}": expected on or off`);
  if (metricsSetting === "off" && metricsListen)
    throw new UsageError("AGENT_METRICS=off and --metrics-listen / AGENT_METRICS_LISTEN: nothing to serve; drop one");
  const [{ default: pino }, { startAgent }, { SocketInUseError }, { textDestination }] = await Promise.all([
    import("pino"),
    import("../daemon.js"),
    import("../api/unix-socket.js"),
    import("../../lib/log-text.js"),
  ]);
  const log = pino({ level, base: { svc: "edge-agent" } }, logFormat === "text" ? textDestination() : undefined);
  const configFile = flags.config ?? process.env.AGENT_CONFIG;
  // Before anything starts: a bad file is refused with nothing touched. (Its code, with the settings' schemas,
  // is loaded only when there is a file: without one the socket listens before they are loaded.)
  const config = configFile ? await import("./config-reload.js") : undefined;
  const firstConfig = config && configFile ? await config.readOrRefuse(configFile, RefusedConfig) : undefined;
  const follower = config && configFile ? config.configFollower(configFile, log) : undefined;
  // Without a file, SIGHUP (systemctl reload) must not end the agent, as Node's default would.
  process.on("SIGHUP", () =>
    follower ? follower.reload() : log.info("SIGHUP: no configuration file (--config) to apply; nothing changed"),
  );
  const caPath = flags.quicCa ?? process.env.AGENT_QUIC_CA;
  // Async, so an unreadable CA file is a failed start like any other.
  const started = (async () =>
    startAgent({
      quicCa: caPath ? fs.readFileSync(caPath, "utf8") : undefined,
      socketPath: flags.socket ?? process.env.AGENT_SOCKET ?? DEFAULT_SOCKET,
      dataDir: flags.data ?? process.env.AGENT_DATA ?? DEFAULT_DATA,
      allowDirs: flags.allowDir ?? process.env.AGENT_ALLOW_DIRS?.split(":").filter(Boolean),
      allowEnv: flags.allowEnv ?? process.env.AGENT_ALLOW_ENV?.split(",").filter(Boolean),
      metricsListen,
      metrics: metricsSetting === "on",
      log,
    }))();
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, "stopping");
    // The socket answers while the agent is still loading: a signal then stops it once it has started
    // (a start that fails is reported below).
    started.then(
      (agent) =>
        agent.close().then(
          () => process.exit(0),
          (e) => {
            log.error({ err: (e as Error).message }, "error while stopping");
            process.exit(1);
          },
        ),
      () => undefined,
    );
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
  try {
    const agent = await started;
    if (follower && firstConfig)
      await follower.start(agent.socketPath, firstConfig).catch(async (e) => {
        await agent.close();
        throw e;
      });
  } catch (e) {
    if (e instanceof Error && config?.isRefusal(e)) throw new RefusedConfig(e.problems);
    const msg = e instanceof SocketInUseError ? e.message : `cannot start: ${(e as Error).message}`;
    process.stderr.write(`edge-agent: ${msg}\n`);
    process.exitCode = 1;
  }
}

/** A usage error is a one-line message and exit code 2, never a stack trace. */
export async function main(argv = process.argv.slice(2)): Promise<void> {
  if (argv[0] === "bench") {
    // Loaded only for this subcommand: the daemon does not pull in the benchmark's code.
    const { benchMain } = await import("../device-bench/cli.js");
    process.exitCode = await benchMain(argv.slice(1));
    return;
  }
  if (argv[0] === "backup") {
    const { backupMain } = await import("./agent-backup.js");
    process.exitCode = await backupMain(argv.slice(1), DEFAULT_DATA);
    return;
  }
  try {
    await buildProgram(runDaemon).parseAsync(argv, { from: "user" });
  } catch (e) {
    const err = e as { code?: string; exitCode?: number };
    if (e instanceof RefusedConfig) {
      process.stderr.write(`${e.problems.map((p) => `edge-agent: ${p}\n`).join("")}edge-agent: config file refused\n`);
      process.exitCode = 2;
    } else if (e instanceof UsageError) {
      process.stderr.write(`edge-agent: ${e.message}\nusage: edge-agent [options] (edge-agent --help)\n`);
      process.exitCode = 2;
    } else if (typeof err.code === "string" && err.code.startsWith("commander.")) {
      // commander printed the message (or the help or version, which exit 0)
      process.exitCode = err.exitCode === 0 ? 0 : 2;
    } else throw e;
  }
}
