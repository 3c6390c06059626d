// `edge-agent --config FILE`: the file is applied to the running agent through its own command API, so it
// passes the same checks as every API call and as `agentctl config-file apply`, at start and on SIGHUP.
// The file wins for what it names: a list section keeps only the file's items, and every field the file gives
// is set; sections, and fields of an item, it leaves out keep what the API set. A refused file changes nothing: its shape and references are checked first, and a
// change the agent refuses half-way (its launch policy, a FIFO path in use) is undone with the settings
// from before.
import type { Logger } from "pino";
import {
  type AgentConfig,
  type CurrentItems,
  ConfigFileError,
  readAgentConfig,
  referenceIssues,
} from "./agent-config-file.js";
import { ApiClient } from "./client.js";
import { ApplyError, applyConfig, showConfig } from "./config-file.js";

/** Applies a decoded file; resolves with what changed (`created upstream rt`, ...). */
export async function applyConfigFile(
  socketPath: string,
  parsed: Awaited<ReturnType<typeof readAgentConfig>>,
): Promise<string[]> {
  const api = new ApiClient(socketPath);
  const before = await showConfig(api);
  const refs = referenceIssues(parsed.config, before as unknown as CurrentItems);
  if (refs.length > 0) throw new ConfigFileError(parsed.file, refs.map(parsed.problem));
  const changes: string[] = [];
  try {
    await applyConfig(api, parsed.raw, (line) => changes.push(line));
  } catch (e) {
    if (changes.length > 0) await applyConfig(api, before, () => undefined);
    if (!(e instanceof ApplyError)) throw e;
    const at = e.at;
    const index = at?.id === undefined ? -1 : itemsOf(parsed.config, at.section).findIndex((i) => i.id === at.id);
    const path = at ? (index >= 0 ? [at.section, index] : [at.section]) : [];
    throw new ConfigFileError(parsed.file, [parsed.problem({ path, message: `the agent refused it: ${e.message}` })]);
  }
  return changes;
}

/** The first read, at start: a refused file becomes the caller's error. */
export async function readOrRefuse(file: string, Refused: new (problems: string[]) => Error) {
  try {
    return await readAgentConfig(file);
  } catch (e) {
    throw e instanceof ConfigFileError ? new Refused(e.problems) : e;
  }
}

export const isRefusal = (e: Error): e is ConfigFileError => e instanceof ConfigFileError;

const itemsOf = (config: AgentConfig, section: string) =>
  (config[section as keyof AgentConfig] as readonly { id: string }[] | undefined) ?? [];

/**
 * Applies the file once the agent listens (`start`: rejects when the agent refuses it) and again on every
 * `reload` (SIGHUP), one apply at a time, a reload during start after it; a refused reload is logged and the
 * running settings stay.
 */
export function configFollower(file: string, log: Logger) {
  let socketPath = "";
  const apply = async (parsed: Awaited<ReturnType<typeof readAgentConfig>>, reason: string) => {
    const changes = await applyConfigFile(socketPath, parsed);
    log.info(
      { config: file, reason, changes },
      changes.length === 0 ? "config file applied: no change" : `config file applied: ${changes.join(", ")}`,
    );
  };
  let started!: () => void;
  let queue = new Promise<void>((resolve) => (started = resolve));
  return {
    start(socket: string, first: Awaited<ReturnType<typeof readAgentConfig>>): Promise<void> {
      socketPath = socket;
      const applied = apply(first, "start");
      applied.then(started, started);
      return applied;
    },
    reload(): void {
      queue = queue.then(async () => {
        try {
          await apply(await readAgentConfig(file), "SIGHUP");
        } catch (e) {
          const problems = e instanceof ConfigFileError ? e.problems : [(e as Error).message];
          log.error({ config: file, problems }, `config file refused, running settings kept: ${problems.join("; ")}`);
        }
      });
    },
  };
}
