// What a TLS listen address adds in front of the HTTPS server: HSTS on every answer (a browser that has seen it
// goes to https:// by itself from then on), and a plain-HTTP request reaching the port gets a 400 saying to use
// https:// instead of the empty reply a TLS server gives to bytes that are no handshake. The first bytes of a
// new connection tell which it is: a TLS connection starts with a handshake record (0x16).
import type http from "node:http";
import type https from "node:https";
import type { Socket } from "node:net";
import { errorBodyJson } from "./error-reply.js";

/** One year, the host only: the peer does not speak for other names under its domain. */
export const HSTS = "max-age=31536000";
const TLS_HANDSHAKE = 0x16;
const HTTP_REQUEST_LINE = /^[A-Z]{3,8} \S+ HTTP\/1\.[01]\r?\n/;

/** The request listener with Strict-Transport-Security on every answer. */
export function withHsts(listener: http.RequestListener): http.RequestListener {
  return (req, res) => {
    res.setHeader("Strict-Transport-Security", HSTS);
    listener(req, res);
  };
}

/** The 400 for a plain-HTTP request, naming the https:// URL when the request said its host. */
function plainHttpAnswer(head: string): string {
  const host = /\r?\nhost:[ \t]*([A-Za-z0-9.:[\]-]{1,255})[ \t]*\r?\n/i.exec(head)?.[1];
  const { contentType, body } = errorBodyJson(
    400,
    `this port speaks HTTPS: a plain HTTP request reached it; use ${host ? `https://${host}/` : "https://"}`,
  );
  return (
    "HTTP/1.1 400 Bad Request\r\n" +
    `Content-Type: ${contentType}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
    `Strict-Transport-Security: ${HSTS}\r\nConnection: close\r\n\r\n${body}`
  );
}

/**
 * Routes each new connection of `server` by its first bytes: a TLS handshake to the server's own TLS handling,
 * a plain HTTP request to the 400 above, anything else closed. Call before other "connection" listeners are added
 * (they then see every connection at once, as before). A connection that sends nothing within `idleMs` is closed.
 */
export function answerPlainHttp(server: https.Server, idleMs: number): void {
  const tlsListeners = server.listeners("connection") as ((socket: Socket) => void)[];
  server.removeAllListeners("connection");
  server.on("connection", (socket: Socket) => {
    const fail = () => socket.destroy();
    socket.on("error", fail);
    const idle = setTimeout(fail, idleMs);
    const first = () => {
      const chunk = socket.read() as Buffer | null;
      if (chunk === null) return; // not yet: "readable" again when bytes come
      socket.off("readable", first);
      clearTimeout(idle);
      socket.unshift(chunk); // TLS takes the bytes already read before it reads the socket itself
      if (chunk[0] === TLS_HANDSHAKE) {
        socket.off("error", fail);
        for (const l of tlsListeners) l.call(server, socket);
        return;
      }
      const head = chunk.toString("latin1", 0, Math.min(chunk.length, 8192));
      if (HTTP_REQUEST_LINE.test(head)) socket.end(plainHttpAnswer(head));
      else socket.destroy();
    };
    socket.on("readable", first);
    socket.once("close", () => clearTimeout(idle));
  });
}
