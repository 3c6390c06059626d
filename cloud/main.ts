// Command line of the cloud peer. Each command lives in cloud/cli/<name>.ts.
import { Command } from "commander";
import { serve } from "./cli/serve.js";
import { addSettingOptions, settingFlags } from "./cli/setting-options.js";
import { ENV_VARS } from "./config.js";
import { VERSION } from "./server.js";

const program = new Command("cloud-peer")
  .description("Self-hostable cloud peer: OAuth 2.0 server, accounts, access control, iSCP v2 broker")
  .version(VERSION)
  .enablePositionalOptions() // a sub-command's --data or --config is its own, not the server's
  .action(async (opts: Record<string, unknown>) => {
    await serve(settingFlags(opts));
  });
addSettingOptions(program);

// Sub-commands register themselves here (token create, keys rotate, backup, restore, ...).
const commandFiles = [
  "./cli/token.js",
  "./cli/keys.js",
  "./cli/backup.js",
  "./cli/restore.js",
  "./cli/admin.js",
  "./cli/config-show.js",
  "./cli/migrate-store.js",
  "./cli/migrate-status.js",
];
for (const file of commandFiles) {
  try {
    const mod = (await import(file)) as { register?: (p: Command) => void };
    mod.register?.(program);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ERR_MODULE_NOT_FOUND") throw err;
  }
}

/** One usage line per runnable command with all its options, read from the command tree itself. */
function usageLines(cmd: Command, prefix: string): string[] {
  const subs = cmd.commands.filter((c) => c.name() !== "help");
  if (subs.length > 0) return subs.flatMap((c) => usageLines(c, `${prefix} ${c.name()}`));
  const opts = cmd.options.filter((o) => o.long !== "--help").map((o) => (o.mandatory ? o.flags : `[${o.flags}]`));
  return [`  ${[prefix, ...opts].join(" ")}`];
}

program.addHelpText("after", () => {
  const serveLine = `  cloud-peer ${program.options
    .filter((o) => !["--help", "--version"].includes(o.long ?? ""))
    .map((o) => `[${o.flags}]`)
    .join(" ")}`;
  const width = Math.max(...ENV_VARS.map(([name]) => name.length));
  return (
    "\nEvery command and option:\n" +
    [serveLine, ...usageLines(program, "cloud-peer")].join("\n") +
    "\n\nEnvironment (flags win over the environment, which wins over the --config file):\n" +
    ENV_VARS.map(([name, what]) => `  ${name.padEnd(width)}  ${what}`).join("\n") +
    "\n"
  );
});

try {
  await program.parseAsync(process.argv);
} catch (err) {
  // Bad settings or a busy port: one line, no stack trace.
  process.stderr.write(`cloud-peer: ${(err as Error).message}\n`);
  process.exit(2);
}
