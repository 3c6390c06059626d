// What a client can hold of the server before it has shown any credentials: connections from one address and in
// all (more are closed at once), and time: a connection must send its headers within --http-headers-timeout (also
// a new connection's first request, so idle sockets are closed) and its whole request within
// --http-request-timeout (a trickling body gets 408). Node's own defaults hold a slow body 5 minutes and cap nothing.
import fs from "node:fs";
import type http from "node:http";
import { isIP, type Socket } from "node:net";
import type { Logger } from "pino";
import { isTrustedProxy } from "./client-address.js";

export interface ConnectionLimits {
  maxConnections: number;
  maxConnectionsPerAddress: number;
  httpHeadersTimeout: number;
  httpRequestTimeout: number;
  trustedProxies: readonly string[];
}

/** Without a setting: four fifths of the open-file limit, so descriptors remain for files and the database. */
function defaultMaxConnections(): number {
  try {
    const line = /^Max open files\s+(\d+)/m.exec(fs.readFileSync("/proc/self/limits", "utf8"));
    if (line) return Math.max(64, Math.floor(Number(line[1]) * 0.8));
  } catch {
    /* not Linux */
  }
  return 10_000;
}

/** Options of http.createServer / https.createServer. */
export function serverTimeouts(l: ConnectionLimits): http.ServerOptions & { handshakeTimeout: number } {
  const requestTimeout = l.httpRequestTimeout * 1000;
  // Node refuses headers allowed longer than the whole request.
  const headersTimeout = Math.min(l.httpHeadersTimeout * 1000, requestTimeout);
  // Expired requests are found by a sweep: once a second keeps the timeouts close to what is set.
  return { headersTimeout, requestTimeout, connectionsCheckingInterval: 1000, handshakeTimeout: headersTimeout };
}

/** Connections of one IPv6 /64 (what one host is usually given) count together; IPv4 addresses each alone. */
function addressKey(address: string): string {
  const v4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (v4 || isIP(address) !== 6) return v4 ?? address;
  const [head = "", tail = ""] = address.split("::");
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const groups = address.includes("::")
    ? [...left, ...Array(8 - left.length - right.length).fill("0"), ...right]
    : left;
  return `${groups
    .slice(0, 4)
    .map((g) => g.toLowerCase().replace(/^0+(?=.)/, ""))
    .join(":")}::/64`;
}

export function limitConnections(server: http.Server, l: ConnectionLimits, log: Logger): void {
  server.maxConnections = l.maxConnections || defaultMaxConnections();
  let warned = 0;
  server.on("drop", () => {
    if (Date.now() - warned > 60_000)
      log.warn({ max_connections: server.maxConnections }, "connection refused: the peer holds --max-connections");
    warned = Date.now();
  });
  if (l.maxConnectionsPerAddress <= 0) return;
  const open = new Map<string, number>();
  server.on("connection", (socket: Socket) => {
    const address = socket.remoteAddress;
    if (!address || isTrustedProxy(l.trustedProxies, address)) return;
    const key = addressKey(address);
    const n = (open.get(key) ?? 0) + 1;
    if (n > l.maxConnectionsPerAddress) {
      socket.destroy();
      return;
    }
    open.set(key, n);
    socket.once("close", () => {
      const left = (open.get(key) ?? 1) - 1;
      if (left > 0) open.set(key, left);
      else open.delete(key);
    });
  });
}
