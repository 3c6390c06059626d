// Command line of the cloud peer. Each command lives in cloud/cli/<name>.ts.
import { Command } from "commander";
import { serve } from "./cli/serve.js";
import { VERSION } from "./server.js";

const program = new Command("cloud-peer")
  .description("Self-hostable cloud peer: OAuth 2.0 server, accounts, access control, iSCP v2 broker")
  .version(VERSION)
  .option("--listen <host:port>", "address to listen on (env CLOUD_LISTEN)", undefined)
  .option("--data <dir>", "data directory (env CLOUD_DATA)", undefined)
  .option("--public-url <url>", "public base URL (env CLOUD_PUBLIC_URL)", undefined)
  .option("--iscp-quic-listen <host:port>", "UDP address for iSCP over QUIC (env CLOUD_ISCP_QUIC_LISTEN)", undefined)
  .option("--log-level <level>", "pino log level (env CLOUD_LOG_LEVEL)", undefined)
  .addHelpText(
    "after",
    "\nEnvironment: CLOUD_LISTEN, CLOUD_DATA, CLOUD_PUBLIC_URL, CLOUD_ADMIN_PASSWORD, CLOUD_SMTP_URL, CLOUD_MAIL_FROM,\n" +
      "CLOUD_LOG_LEVEL, CLOUD_ACCESS_TOKEN_TTL, CLOUD_REFRESH_TOKEN_TTL, CLOUD_LOCKOUT_THRESHOLD,\n" +
      "CLOUD_PASSWORD_LIFETIME_DAYS, CLOUD_ISCP_QUIC_LISTEN",
  )
  .action(async (opts) => {
    await serve({ listen: opts.listen, dataDir: opts.data, publicUrl: opts.publicUrl, iscpQuicListen: opts.iscpQuicListen, logLevel: opts.logLevel });
  });

// Sub-commands register themselves here (token create, keys rotate, ...).
const commandFiles = ["./cli/token.js", "./cli/keys.js"];
for (const file of commandFiles) {
  try {
    const mod = (await import(file)) as { register?: (p: Command) => void };
    mod.register?.(program);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ERR_MODULE_NOT_FOUND") throw err;
  }
}

await program.parseAsync(process.argv);
