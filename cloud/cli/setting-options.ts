// The settings' command-line flags, made from the settings table (cloud/config-schema.ts) so a new setting needs
// no change here. Secrets have no flag: a command line is visible to every user of the machine.
import type { Command } from "commander";
import { SETTING_NAMES, meta } from "../config-schema.js";
import type { ConfigInput } from "../config.js";

const camel = (flag: string) => flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

export function addSettingOptions(cmd: Command): Command {
  cmd.option("--config <file>", "YAML file of settings (keys: the flag names; flags and environment win over it)");
  for (const name of SETTING_NAMES) {
    const { flag, env, help, arg, secret } = meta(name);
    if (secret) continue;
    cmd.option(`--${flag} <${arg ?? "value"}>`, env ? `${help} (env ${env})` : help);
  }
  return cmd;
}

/** Commander's options (camelCase of the flag) as loadConfig's flags (setting names). */
export function settingFlags(opts: Record<string, unknown>): ConfigInput {
  const flags: ConfigInput = { config: opts.config as string | undefined };
  for (const name of SETTING_NAMES) flags[name] = opts[camel(meta(name).flag)] as string | undefined;
  return flags;
}
