// `agentctl config-file show|apply`: the whole configuration as one YAML document.
// Apply makes each list section present in the file exactly what the file says (sections left out
// are not touched), in an order that never breaks a dest_ids reference: delete referrers that go,
// upsert referenced items, upsert referrers, then delete referenced items that go.
import type { ApiClient } from "./client.js";
import { SECRET_MASK } from "./output.js";
import { LISTS, SINGLES, bySection, type ListResource } from "./resources.js";

export class ApplyError extends Error {
  constructor(
    message: string,
    /** The section (and item) the agent refused, when it refused one. */
    readonly at?: { section: string; id?: string },
  ) {
    super(message);
  }
}

type Item = Record<string, unknown> & { id: string };
type Doc = Record<string, unknown>;

async function ok<T>(p: Promise<{ status: number; body: unknown }>, what: string, at?: ApplyError["at"]): Promise<T> {
  const r = await p;
  if (r.status >= 400) {
    const b = r.body as { detail?: string; title?: string } | undefined;
    throw new ApplyError(`${what}: ${b?.detail ?? b?.title ?? `HTTP ${r.status}`}`, at);
  }
  return r.body as T;
}

export async function showConfig(api: ApiClient): Promise<Doc> {
  const doc: Doc = {};
  for (const s of SINGLES) doc[s.section] = await ok(api.get(s.path), `GET ${s.path}`);
  for (const l of LISTS) doc[l.section] = (await ok<{ items: Item[] }>(api.get(l.path), `GET ${l.path}`)).items;
  return doc;
}

// Referenced items are created before, and deleted after, the items that name them in dest_ids.
const REFERENCED = ["upstream", "device_connectors_downstream"];
const REFERRERS = ["device_connectors_upstream", "downstream", "filters_upstream", "filters_downstream"];

function itemsOf(doc: Doc, section: string): Item[] | undefined {
  const v = doc[section];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw new ApplyError(`${section}: expected a list`);
  return v.map((x, i) => {
    if (!x || typeof x !== "object" || typeof (x as Item).id !== "string")
      throw new ApplyError(`${section}[${i}]: expected an object with an id`);
    return x as Item;
  });
}

export async function applyConfig(api: ApiClient, doc: Doc, log: (line: string) => void): Promise<number> {
  let changes = 0;
  const known = new Set([...SINGLES.map((s) => s.section), ...LISTS.map((l) => l.section)]);
  for (const k of Object.keys(doc))
    if (!known.has(k)) throw new ApplyError(`unknown section "${k}" (known: ${[...known].join(", ")})`);

  for (const s of SINGLES) {
    const v = doc[s.section];
    if (v === undefined || v === null) continue;
    if (typeof v !== "object" || Array.isArray(v)) throw new ApplyError(`${s.section}: expected an object`);
    const body = { ...(v as Doc) };
    // "" is "not set" and the mask is what show prints without --show-secrets: both keep the stored secret.
    if (s.section === "connection" && (body.client_secret === "" || body.client_secret === SECRET_MASK))
      delete body.client_secret;
    const current = await ok<Doc>(api.get(s.path), `GET ${s.path}`);
    if (Object.entries(body).every(([k, x]) => JSON.stringify(current[k]) === JSON.stringify(x))) continue;
    await ok(api.patch(s.path, body), s.section, { section: s.section });
    log(`updated ${s.section}`);
    changes++;
  }

  const current = new Map<string, Item[]>();
  for (const l of LISTS) current.set(l.section, (await ok<{ items: Item[] }>(api.get(l.path), `GET ${l.path}`)).items);
  const wanted = (section: string) => itemsOf(doc, section);

  const remove = async (section: string) => {
    const want = wanted(section);
    if (!want) return;
    const l = bySection(section)!;
    for (const item of current.get(section)!) {
      if (want.some((w) => w.id === item.id)) continue;
      await ok(api.delete(`${l.path}/${encodeURIComponent(item.id)}`), `delete ${section} ${item.id}`, { section });
      log(`deleted ${section} ${item.id}`);
      changes++;
    }
  };
  const upsert = async (section: string) => {
    const want = wanted(section);
    if (!want) return;
    const l = bySection(section)!;
    let have = current.get(section)!.filter((c) => want.some((w) => w.id === c.id));
    if (section.startsWith("filters_") && !filterOrderKept(have, want)) {
      // Filters run in creation order: recreate them all to follow the file's order.
      for (const f of have) await ok(api.delete(`${l.path}/${encodeURIComponent(f.id)}`), `delete ${section} ${f.id}`);
      have = [];
    }
    for (const item of want) {
      const existing = have.find((h) => h.id === item.id);
      if (!existing) {
        await ok(api.post(l.path, item), `create ${section} ${item.id}`, { section, id: item.id });
        log(`created ${section} ${item.id}`);
        changes++;
      } else if (!sameItem(existing, item)) {
        await ok(
          api.patch(`${l.path}/${encodeURIComponent(item.id)}`, patchBody(l, existing, item)),
          `update ${section} ${item.id}`,
          { section, id: item.id },
        );
        log(`updated ${section} ${item.id}`);
        changes++;
      }
    }
  };

  for (const s of REFERRERS) await remove(s);
  for (const s of REFERENCED) await upsert(s);
  for (const s of REFERRERS) await upsert(s);
  for (const s of REFERENCED) await remove(s);
  return changes;
}

function sameItem(a: Item, b: Item): boolean {
  return (
    Object.entries(b).every(([k, v]) => JSON.stringify(a[k]) === JSON.stringify(v)) &&
    (a.launch === undefined) === (b.launch === undefined)
  );
}

function patchBody(l: ListResource, existing: Item, item: Item): Doc {
  const { id: _id, ...rest } = item;
  // A launch object in the agent but not in the file is removed (null), not left in place.
  if (l.section.startsWith("device_connectors_") && existing.launch !== undefined && item.launch === undefined)
    return { ...rest, launch: null };
  return rest;
}

/** True when patching existing filters and appending new ones yields the file's order. */
function filterOrderKept(have: Item[], want: Item[]): boolean {
  const result = [...have.map((h) => h.id), ...want.filter((w) => !have.some((h) => h.id === w.id)).map((w) => w.id)];
  return result.join("\u0000") === want.map((w) => w.id).join("\u0000");
}
