// Test broker: a plain http.Server on port 0 with the iSCP broker attached and a stub
// authenticate that accepts one fixed token.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { attachIscpBroker, type IscpBroker } from "../../cloud/iscp/broker/broker.js";
import type { IscpBrokerOptions, IscpLimits } from "../../cloud/iscp/broker/options.js";
import { ResultCode } from "../../proto/wire/message.js";

export const TOKEN = "test-token";
export const PROJECT = "00000000-0000-0000-0000-000000000000";

export interface TestBroker {
  server: http.Server;
  broker: IscpBroker;
  port: number;
  address: string;
  url: string;
  close(): Promise<void>;
}

export async function startTestBroker(
  opts: Partial<IscpBrokerOptions> & { limits?: Partial<IscpLimits> } = {},
): Promise<TestBroker> {
  const server = http.createServer((_req, res) => {
    res.statusCode = 404;
    res.end();
  });
  const broker = attachIscpBroker(server, {
    authenticate: async (token, _project, nodeId) =>
      token === TOKEN
        ? { ok: true, subject: { kind: nodeId ? "edge" : "user", uuid: "subject-1" } }
        : { ok: false, resultCode: ResultCode.AUTH_FAILED, resultString: "bad token" },
    ...opts,
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return {
    server,
    broker,
    port,
    address: `127.0.0.1:${port}`,
    url: `ws://127.0.0.1:${port}/api/iscp/connect`,
    async close() {
      await broker.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

export async function waitFor(cond: () => boolean, timeoutMs = 30_000, what = "condition"): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A self-signed EC key and certificate for localhost and 127.0.0.1 (QUIC needs TLS), made by openssl in a temp dir. */
export function makeLocalhostCert(): { key: string; cert: string } {
  const dir = mkdtempSync(join(tmpdir(), "iscp-cert-"));
  try {
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-keyout",
        join(dir, "key.pem"),
        "-out",
        join(dir, "cert.pem"),
        "-days",
        "1",
        "-subj",
        "/CN=localhost",
        "-addext",
        "subjectAltName=DNS:localhost,IP:127.0.0.1",
      ],
      { stdio: "ignore" },
    );
    return { key: readFileSync(join(dir, "key.pem"), "utf8"), cert: readFileSync(join(dir, "cert.pem"), "utf8") };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
