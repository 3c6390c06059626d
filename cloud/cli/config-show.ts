// `cloud-peer config show`: the effective settings (flags > environment > --config file > defaults) as YAML, in
// the --config file's own keys, secrets masked; a bad value fails exactly as the start would.
import type { Command } from "commander";
import YAML from "yaml";
import { resolveSettings, showSettings, type ConfigInput } from "../config.js";
import { addSettingOptions, settingFlags } from "./setting-options.js";

export function configShow(flags: ConfigInput, env: NodeJS.ProcessEnv = process.env): string {
  return YAML.stringify(showSettings(resolveSettings(flags, env)));
}

export function register(program: Command): void {
  const config = program.command("config").description("the cloud peer's settings");
  addSettingOptions(config.command("show").description("print the effective settings as YAML (secrets masked)")).action(
    (opts: Record<string, unknown>) => {
      process.stdout.write(configShow(settingFlags(opts)));
    },
  );
}
