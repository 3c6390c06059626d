// The address a request came from, for per-address limits. Behind a reverse proxy every request's socket is the
// proxy's, so one guesser would lock everyone out. When the socket's peer is a configured trusted proxy
// (CLOUD_TRUSTED_PROXIES), X-Forwarded-For is read from the right: the first address that is not itself a
// trusted proxy is the client (the left part of the header is whatever the client chose to send). Without the
// setting, or from any other peer, the header is ignored: anyone can write it.
import type { IncomingMessage } from "node:http";
import { BlockList, isIP } from "node:net";

/** Parses `CLOUD_TRUSTED_PROXIES`: addresses and CIDR ranges, comma-separated; throws on a bad entry. */
export function parseTrustedProxies(v: string | undefined): string[] {
  const entries = (v ?? "")
    .split(",")
    .map((e) => e.trim())
    .filter(Boolean);
  trustedList(entries); // validates, and caches the list for clientAddress
  return entries;
}

const lists = new WeakMap<readonly string[], BlockList>();

function trustedList(entries: readonly string[]): BlockList {
  let list = lists.get(entries);
  if (list) return list;
  list = new BlockList();
  for (const e of entries) {
    const [addr = "", bits, extra] = e.split("/");
    const family = isIP(addr);
    const prefix = bits === undefined ? undefined : Number(bits);
    const max = family === 6 ? 128 : 32;
    if (
      family === 0 ||
      extra !== undefined ||
      (prefix !== undefined && !(Number.isInteger(prefix) && prefix >= 0 && prefix <= max && /^\d+$/.test(bits!)))
    )
      throw new Error(`invalid CLOUD_TRUSTED_PROXIES entry "${e}": expected an IP address or CIDR range`);
    const type = family === 6 ? "ipv6" : "ipv4";
    if (prefix === undefined) list.addAddress(addr, type);
    else list.addSubnet(addr, prefix, type);
  }
  lists.set(entries, list);
  return list;
}

/** An IPv4 address Node reports as IPv4-mapped IPv6 (`::ffff:10.0.0.1`) is checked as IPv4. */
function isTrusted(list: BlockList, address: string): boolean {
  const v4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  const a = v4 ?? address;
  const family = isIP(a);
  return family !== 0 && list.check(a, family === 6 ? "ipv6" : "ipv4");
}

/** Whether `address` (a socket's peer) is one of the trusted proxies. */
export const isTrustedProxy = (entries: readonly string[], address: string): boolean =>
  entries.length > 0 && isTrusted(trustedList(entries), address);

export function clientAddress(req: IncomingMessage, trustedProxies: readonly string[] | undefined): string {
  const peer = req.socket.remoteAddress ?? "unknown";
  if (!trustedProxies?.length) return peer;
  const list = trustedList(trustedProxies);
  if (!isTrusted(list, peer)) return peer;
  const header = req.headers["x-forwarded-for"];
  const hops = (Array.isArray(header) ? header.join(",") : (header ?? ""))
    .split(",")
    .map((h) => h.trim())
    .filter(Boolean);
  let client = peer;
  for (let i = hops.length - 1; i >= 0; i--) {
    // A malformed hop ends the walk: what lies left of it cannot be trusted either.
    if (isIP(hops[i]!) === 0) break;
    client = hops[i]!;
    if (!isTrusted(list, client)) break;
  }
  return client;
}
