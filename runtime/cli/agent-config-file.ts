// The agent's configuration file (`edge-agent --config FILE`): the YAML document `agentctl config-file show`
// prints and `agentctl config-file apply` takes, read and decoded here before anything is applied. Each
// section is decoded with the schemas of the command API's create and update bodies (unknown sections and
// fields refused too), and every problem names the file's line and the field's path, so a bad file is refused
// as a whole.
import { readFile } from "node:fs/promises";
import * as Schema from "effect/Schema";
import YAML, { isMap, isNode, isScalar, LineCounter, type Document } from "yaml";
import { decodeInput, type Issue } from "../../lib/http/decode.js";
import { yamlErrorLine } from "../../lib/yaml-error.js";
import {
  ConnectionUpdate,
  DEFERRED_ID,
  DeferredUploadUpdate,
  DownstreamCreate,
  DownstreamIpcCreate,
  FilterCreate,
  TransportUpdate,
  UpstreamCreate,
  UpstreamIpcCreate,
} from "../settings/schemas.js";
import { SECRET_MASK } from "./output.js";

/** The file's sections: the update bodies of the single settings, the create bodies of the lists' items. */
export const AgentConfigFile = Schema.Struct({
  connection: Schema.optional(ConnectionUpdate),
  transport: Schema.optional(TransportUpdate),
  deferred_upload: Schema.optional(DeferredUploadUpdate),
  upstream: Schema.optional(Schema.Array(UpstreamCreate)),
  downstream: Schema.optional(Schema.Array(DownstreamCreate)),
  device_connectors_upstream: Schema.optional(Schema.Array(UpstreamIpcCreate)),
  device_connectors_downstream: Schema.optional(Schema.Array(DownstreamIpcCreate)),
  filters_upstream: Schema.optional(Schema.Array(FilterCreate)),
  filters_downstream: Schema.optional(Schema.Array(FilterCreate)),
});
export type AgentConfig = typeof AgentConfigFile.Type;

/** A refused file: `problems` are whole lines, each `FILE line N: path: message`. */
export class ConfigFileError extends Error {
  constructor(
    readonly file: string,
    readonly problems: string[],
  ) {
    super(problems.join("\n"));
  }
}

/** A decoded file, and how to name the line of a problem found later (a reference to a missing item). */
export interface ParsedConfig {
  file: string;
  config: AgentConfig;
  /** The file's sections as written (checked by `config`): what is applied, so fields left out keep their values. */
  raw: Record<string, unknown>;
  problem(issue: Issue): string;
}

/** Reads and decodes the file; a ConfigFileError lists every problem with its line. */
export async function readAgentConfig(file: string): Promise<ParsedConfig> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (e) {
    throw new ConfigFileError(file, [`${file}: cannot read: ${(e as Error).message}`]);
  }
  return parseAgentConfig(file, text);
}

export function parseAgentConfig(file: string, text: string): ParsedConfig {
  const lines = new LineCounter();
  const doc = YAML.parseDocument(text, { lineCounter: lines, uniqueKeys: true });
  if (doc.errors.length > 0) throw new ConfigFileError(file, [`${file}: ${yamlErrorLine(doc.errors[0], text)}`]);
  let raw: unknown;
  try {
    raw = doc.toJS() ?? {};
  } catch (e) {
    // An unresolved alias (`*name`; an unquoted `********` is one): named, not thrown as a stack.
    throw new ConfigFileError(file, [`${file}: ${(e as Error).message} (quote a value that starts with *)`]);
  }
  if (raw === null || typeof raw !== "object" || Array.isArray(raw))
    throw new ConfigFileError(file, [`${file} line 1: expected a mapping of sections (connection, upstream, ...)`]);
  const sections: Record<string, unknown> = {};
  // A section with nothing under it (`upstream:`) is left out, as `agentctl config-file apply` does.
  for (const [k, v] of Object.entries(raw)) if (v !== null) sections[k] = v;
  const connection = sections.connection as Record<string, unknown> | undefined;
  // "" is "not set" and the mask is what `config-file show` prints: both keep the stored secret.
  if (connection && typeof connection === "object" && [SECRET_MASK, ""].includes(connection.client_secret as string)) {
    const { client_secret: _kept, ...rest } = connection;
    sections.connection = rest;
  }
  const decoded = decodeInput(AgentConfigFile, sections, "error");
  const where = (i: Issue) => problem(file, doc, lines, i);
  if (!decoded.ok) throw new ConfigFileError(file, oneProblemPerField(decoded.issues).map(where));
  const duplicates = duplicateIds(decoded.value).map(where);
  if (duplicates.length > 0) throw new ConfigFileError(file, duplicates);
  return { file, config: decoded.value, raw: sections, problem: where };
}

type Referrer = { id: string; dest_ids: readonly string[] };
/** What the agent has now, for the sections the file leaves out. */
export interface CurrentItems {
  upstream: Referrer[] | { id: string }[];
  device_connectors_upstream: Referrer[];
  downstream: Referrer[];
  device_connectors_downstream: { id: string }[];
}

/**
 * dest_ids that would name a missing item once the file is applied: checked before any change, so the agent
 * never refuses the file half-way through. Items come from the file's section, or from the agent's own when
 * the file leaves the section out.
 */
export function referenceIssues(config: AgentConfig, have: CurrentItems): Issue[] {
  const out: Issue[] = [];
  const check = (
    referrers: "device_connectors_upstream" | "downstream",
    targets: "upstream" | "device_connectors_downstream",
    allowed: (id: string) => boolean,
  ) => {
    const known = new Set((config[targets] ?? have[targets]).map((t) => t.id));
    const fromFile = config[referrers];
    (fromFile ?? have[referrers]).forEach((item, i) =>
      item.dest_ids.forEach((d, j) => {
        if (known.has(d) || allowed(d)) return;
        if (fromFile) out.push({ path: [referrers, i, "dest_ids", j], message: `${targets} "${d}" is not configured` });
        else
          out.push({
            path: [targets],
            message: `leaves out "${d}", which ${referrers} "${item.id}" (not in the file) names in dest_ids`,
          });
      }),
    );
  };
  check("device_connectors_upstream", "upstream", (d) => d === DEFERRED_ID);
  check("downstream", "device_connectors_downstream", () => false);
  return out;
}

/**
 * effect reports each alternative of a union on its own (`Expected "partial"`, `Expected "unreliable"`, and an
 * optional field's `Expected undefined`): one problem per field, its alternatives joined.
 */
function oneProblemPerField(issues: readonly Issue[]): Issue[] {
  const byField = new Map<string, { path: Issue["path"]; expected: string[]; actual?: string; other: string[] }>();
  for (const issue of issues) {
    if (issue.message.startsWith("Expected undefined")) continue;
    const key = JSON.stringify(issue.path.map(String));
    const entry = byField.get(key) ?? { path: issue.path, expected: [], other: [] };
    byField.set(key, entry);
    const m = /^Expected (.*), actual (.*)$/s.exec(issue.message);
    if (m) {
      entry.expected.push(m[1]!);
      entry.actual = m[2];
    } else entry.other.push(issue.message);
  }
  return [...byField.values()].map((e) => ({
    path: e.path,
    message: e.other[0] ?? `Expected ${e.expected.join(" | ")}, actual ${e.actual}`,
  }));
}

/** Two items of one section with the same id (the API would refuse the second one half-way through). */
function duplicateIds(config: AgentConfig): Issue[] {
  const out: Issue[] = [];
  for (const [section, items] of Object.entries(config)) {
    if (!Array.isArray(items)) continue;
    const seen = new Set<string>();
    items.forEach((item: { id: string }, i) => {
      if (seen.has(item.id))
        out.push({ path: [section, i, "id"], message: `"${item.id}" appears twice in ${section}` });
      seen.add(item.id);
    });
  }
  return out;
}

/** `FILE line N: a[0].b: message`, N the line of the deepest node of the path the file has. */
export function problem(file: string, doc: Document, lines: LineCounter, issue: Issue): string {
  const path = issue.path.map((p) => (typeof p === "symbol" ? String(p) : p));
  let line = 1;
  for (let n = path.length; n >= 0; n--) {
    const node = n === 0 ? doc.contents : doc.getIn(path.slice(0, n), true);
    // A mapping's entry is shown at its key (an unknown field's value may start on the next line).
    const parent = n === 0 ? undefined : n === 1 ? doc.contents : doc.getIn(path.slice(0, n - 1), true);
    const key = isMap(parent)
      ? parent.items.find((p) => isScalar(p.key) && p.key.value === path[n - 1])?.key
      : undefined;
    const at = isNode(key) && key.range ? key.range : isNode(node) && node.range ? node.range : undefined;
    if (at) {
      line = lines.linePos(at[0]).line;
      break;
    }
  }
  // Decoding messages echo the value: never a secret's.
  const message = path.includes("client_secret") ? "expected a string of 1 to 1024 characters" : issue.message;
  const field = path.map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? p : `.${p}`)).join("");
  return `${file} line ${line}: ${field ? `${field}: ` : ""}${message}`;
}
