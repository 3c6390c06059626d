// agentctl: the edge agent's command-line client, talking to the daemon's Unix socket.
//   agentctl [--socket PATH] [-o table|json|yaml] [--show-secrets] <command>
// Secrets (the connection's client_secret) print as a mask unless --show-secrets is given.
// Exit codes: 0 ok; 1 the agent refused (its error detail is printed); 2 usage error or agent not
// reachable; 3 `verify` ran but the connection settings did not verify.
import { readFile } from "node:fs/promises";
import { Command, Option } from "commander";
import YAML from "yaml";
import { yamlErrorLine } from "../../lib/yaml-error.js";
import { PACKAGE_VERSION } from "../../lib/package-paths.js";
import { ApiClient, type ApiResponse } from "./client.js";
import { ApplyError, showConfig } from "./config-file.js";
import { ConfigFileError, parseAgentConfig, type ParsedConfig } from "./agent-config-file.js";
import { applyConfigFile } from "./config-reload.js";
import { maskSecrets, render, type Format } from "./output.js";
import { LISTS, SINGLES, byWords, type ListResource } from "./resources.js";
import { commandReference, fieldReference } from "./help-reference.js";
import { UpstreamIpcCreate } from "../settings/schemas.js";
import { chooseSocket, DEV_SOCKET, SERVICE_SOCKET, type SocketChoice } from "./socket-lookup.js";

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

interface Ctx {
  api: ApiClient;
  socket: SocketChoice;
  format: Format;
  out: (s: string) => void;
  showSecrets: boolean;
}

/** Every value agentctl prints goes through here: secrets are masked unless --show-secrets is given. */
const shown = (c: Ctx, value: unknown, format: Format = c.format) =>
  render(c.showSecrets ? value : maskSecrets(value), format);

function parseDoc(text: string, flag: string): unknown {
  try {
    return YAML.parse(text);
  } catch (e) {
    throw new CliError(`${flag}: not valid YAML or JSON: ${yamlErrorLine(e, text)}`, 2);
  }
}

const unreachable = (ctx: Ctx, e: unknown) =>
  new CliError(`cannot reach the edge agent at ${ctx.socket.path} (${ctx.socket.how}): ${(e as Error).message}`, 2);

async function call<T = unknown>(ctx: Ctx, p: Promise<ApiResponse<T>>): Promise<T> {
  let r: ApiResponse<T>;
  try {
    r = await p;
  } catch (e) {
    throw unreachable(ctx, e);
  }
  if (r.status >= 400) {
    const b = r.body as { detail?: string; title?: string } | undefined;
    throw new CliError(
      `${b?.detail ?? b?.title ?? `HTTP ${r.status}`} (${r.status}${b?.title ? ` ${b.title}` : ""})`,
      1,
    );
  }
  return r.body;
}

const asItems = (doc: unknown, flag: string): Record<string, unknown>[] => {
  const list = Array.isArray(doc) ? doc : [doc];
  for (const x of list)
    if (!x || typeof x !== "object" || Array.isArray(x))
      throw new CliError(`${flag}: expected an object (or a list of objects)`, 2);
  return list as Record<string, unknown>[];
};

async function listCommand(
  ctx: Ctx,
  res: ListResource,
  opts: { create?: string; modify?: string; delete?: string; id?: string; get?: string },
) {
  const enc = encodeURIComponent;
  if (opts.create !== undefined) {
    const created = [];
    for (const item of asItems(parseDoc(opts.create, "--create"), "--create"))
      created.push(await call(ctx, ctx.api.post(res.path, item)));
    return ctx.out(shown(ctx, created.length === 1 ? created[0] : created));
  }
  if (opts.modify !== undefined) {
    const updated = [];
    for (const item of asItems(parseDoc(opts.modify, "--modify"), "--modify")) {
      const id = (item.id as string | undefined) ?? opts.id;
      if (typeof id !== "string") throw new CliError("--modify: give the id in the YAML (id: ...) or with --id", 2);
      updated.push(await call(ctx, ctx.api.patch(`${res.path}/${enc(id)}`, item)));
    }
    return ctx.out(shown(ctx, updated.length === 1 ? updated[0] : updated));
  }
  if (opts.delete !== undefined) {
    await call(ctx, ctx.api.delete(`${res.path}/${enc(opts.delete)}`));
    return ctx.out(
      ctx.format === "table" ? `deleted ${res.words.join(" ")} ${opts.delete}\n` : shown(ctx, { deleted: opts.delete }),
    );
  }
  if (opts.get !== undefined) return ctx.out(shown(ctx, await call(ctx, ctx.api.get(`${res.path}/${enc(opts.get)}`))));
  ctx.out(shown(ctx, await call(ctx, ctx.api.get(res.path))));
}

/** Options of which at most one may be given (commander refuses the others with a usage error). */
function exclusive(cmd: Command, options: [flags: string, description: string][]): Command {
  const names = options.map(([flags]) => flags.match(/--([\w-]+)/)![1]!);
  options.forEach(([flags, description], i) =>
    cmd.addOption(new Option(flags, description).conflicts(names.filter((_, j) => j !== i))),
  );
  return cmd;
}

function addListOptions(cmd: Command): Command {
  return exclusive(cmd, [
    ["-c, --create <yaml>", "create from YAML/JSON (an object, or a list of objects)"],
    ["-m, --modify <yaml>", "update the fields given (the YAML names the id, or use --id)"],
    ["-d, --delete <id>", "delete by id"],
    ["-g, --get <id>", "show one by id"],
  ]).option("--id <id>", "id for --modify");
}

export function buildProgram(out: (s: string) => void = (s) => process.stdout.write(s)): Command {
  const program = new Command("agentctl")
    .description("Configure and inspect the edge agent through its command API socket")
    .version(PACKAGE_VERSION)
    .option(
      "-s, --socket <path>",
      `command API socket (env AGENT_SOCKET; default: ${DEV_SOCKET} when it exists, else the service's ${SERVICE_SOCKET})`,
    )
    .addOption(new Option("-o, --output <format>", "output format").choices(["table", "json", "yaml"]).default("table"))
    .option("--show-secrets", "print secrets (the connection's client_secret) instead of masking them")
    .showHelpAfterError()
    .exitOverride();
  const ctx = (): Ctx => {
    const o = program.opts<{ socket?: string; output: Format; showSecrets?: boolean }>();
    const socket = chooseSocket(o.socket);
    return { api: new ApiClient(socket.path), socket, format: o.output, out, showSecrets: o.showSecrets === true };
  };

  program
    .command("version")
    .description("show the command API version")
    .action(async () => {
      const c = ctx();
      const v = await call<{ version: string }>(c, c.api.get("/version"));
      out(c.format === "table" ? `${v.version}\n` : shown(c, v));
    });

  program
    .command("verify")
    .description("verify the connection settings against the server (exit 3 if they do not verify)")
    .action(async () => {
      const c = ctx();
      const r = await call<{ verified: boolean; error: string }>(c, c.api.post("/connection/verify"));
      out(shown(c, r));
      if (!r.verified) throw new CliError(`not verified: ${r.error}`, 3);
    });

  const config = program.command("config").description("show or change settings");
  for (const s of SINGLES) {
    config
      .command(s.word)
      .description(`show or modify the ${s.section.replace("_", " ")} settings`)
      .option("-m, --modify <yaml>", "update the fields given in YAML/JSON")
      .action(async (opts: { modify?: string }) => {
        const c = ctx();
        const body = opts.modify === undefined ? undefined : parseDoc(opts.modify, "--modify");
        out(shown(c, await call(c, body === undefined ? c.api.get(s.path) : c.api.patch(s.path, body))));
      });
  }
  for (const word of ["upstream", "downstream"]) {
    addListOptions(config.command(word).description(`list, create, modify or delete ${word} settings`)).action(
      async (opts) => listCommand(ctx(), byWords([word])!, opts),
    );
  }
  for (const group of ["device-connector", "filter"]) {
    addListOptions(
      config
        .command(group)
        .description(`list, create, modify or delete ${group} settings for a direction`)
        .argument("<direction>", "upstream or downstream"),
    ).action(async (direction: string, opts) => {
      const res = byWords([group, direction]);
      if (!res) throw new CliError(`${group}: direction must be upstream or downstream, not "${direction}"`, 2);
      await listCommand(ctx(), res, opts);
    });
  }

  program
    .command("state")
    .description("show states: upstream, downstream, device-connector upstream|downstream, deferred (all when omitted)")
    .argument("[kind...]", "what to show")
    .addOption(
      new Option("--enabled <bool>", "only enabled (true) or disabled (false) items").choices(["true", "false"]),
    )
    .action(async (kind: string[], opts: { enabled?: string }) => {
      const c = ctx();
      const q = opts.enabled ? `?enabled=${opts.enabled}` : "";
      const wanted = kind.join(" ");
      const sections = LISTS.filter((l) => l.statePath && (wanted === "" || l.words.join(" ") === wanted));
      const showDeferred = wanted === "" || wanted === "deferred";
      if (!showDeferred && sections.length === 0) throw new CliError(`state: unknown kind "${wanted}"`, 2);
      const result: Record<string, unknown> = {};
      for (const l of sections) result[l.section] = await call(c, c.api.get(l.statePath! + q));
      if (showDeferred) result.deferred_upload = await call(c, c.api.get("/deferred-upload/state"));
      const keys = Object.keys(result);
      if (keys.length === 1) return out(shown(c, result[keys[0]!]));
      if (c.format !== "table") return out(shown(c, result));
      for (const k of keys) out(`${k.toUpperCase()}\n${shown(c, result[k], "table")}\n`);
    });

  const measurement = program
    .command("measurement")
    .description("list measurements held on the device (oldest first), or delete one");
  exclusive(measurement, [
    ["-d, --delete <uuid>", "delete the measurement's local data, including data not yet uploaded"],
    ["-g, --get <uuid>", "show one measurement"],
  ]).action(async (opts: { delete?: string; get?: string }) => {
    const c = ctx();
    if (opts.delete) {
      await call(c, c.api.delete(`/measurements/${encodeURIComponent(opts.delete)}`));
      return out(c.format === "table" ? `deleted measurement ${opts.delete}\n` : shown(c, { deleted: opts.delete }));
    }
    if (opts.get) return out(shown(c, await call(c, c.api.get(`/measurements/${encodeURIComponent(opts.get)}`))));
    out(shown(c, await call(c, c.api.get("/measurements"))));
  });

  const file = program.command("config-file").description("export or import the whole configuration as YAML");
  file
    .command("show")
    .description("print the whole configuration (YAML unless -o json)")
    .action(async () => {
      const c = ctx();
      const doc = await wrapApply(() => showConfig(c.api), c);
      out(shown(c, doc, c.format === "json" ? "json" : "yaml"));
    });
  file
    .command("apply")
    .description("make the agent's configuration what FILE says (- for standard input); sections left out are kept")
    .argument("<file>")
    .action(async (path: string) => {
      const c = ctx();
      let text: string;
      try {
        text = path === "-" ? await readStdin() : await readFile(path, "utf8");
      } catch (e) {
        throw new CliError(`cannot read ${path}: ${(e as Error).message}`, 2);
      }
      parseDoc(text, path); // a YAML syntax error: exit 2 at the broken line
      // Checked whole before any change, each problem with its line (as edge-agent --config does), then applied.
      let parsed: ParsedConfig;
      try {
        parsed = parseAgentConfig(path === "-" ? "stdin" : path, text);
      } catch (e) {
        if (e instanceof ConfigFileError) throw new CliError(e.problems.join("\nagentctl: "), 2);
        throw e;
      }
      const changes = await wrapApply(() => applyConfigFile(c.socket.path, parsed), c);
      if (c.format === "table") for (const l of changes) out(`${l}\n`);
      const n = changes.length;
      out(c.format === "table" ? `${n} change${n === 1 ? "" : "s"} applied\n` : shown(c, { changes: n }));
    });
  program.addHelpText(
    "after",
    () =>
      `\nEvery command and its options:\n${commandReference(program)}\n\n` +
      `Fields of a device connector (config device-connector upstream|downstream -c '{...}'; downstream ones have no dest_ids;\n` +
      `docs/agent-api.md says what each does):\n${fieldReference(UpstreamIpcCreate)}\n`,
  );
  return program;
}

async function wrapApply<T>(f: () => Promise<T>, c: Ctx): Promise<T> {
  try {
    return await f();
  } catch (e) {
    if (e instanceof ApplyError) throw new CliError(e.message, 1);
    if (e instanceof ConfigFileError) throw new CliError(e.problems.join("\nagentctl: "), 1);
    throw unreachable(c, e);
  }
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

export async function main(argv = process.argv): Promise<void> {
  try {
    await buildProgram().parseAsync(argv);
  } catch (e) {
    const err = e as { code?: string; exitCode?: number; message?: string };
    if (e instanceof CliError) {
      process.stderr.write(`agentctl: ${e.message}\n`);
      process.exitCode = e.exitCode;
    } else if (typeof err.code === "string" && err.code.startsWith("commander.")) {
      // commander already printed the message (or help/version, which exit 0)
      process.exitCode = err.exitCode === 0 ? 0 : 2;
    } else {
      process.stderr.write(`agentctl: ${err.message ?? String(e)}\n`);
      process.exitCode = 2;
    }
  }
}
