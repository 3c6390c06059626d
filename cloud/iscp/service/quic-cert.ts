// QUIC needs TLS. Unless an operator provides certificate and key files (config: iscpQuicCert/Key), a
// self-signed P-256 certificate for localhost is made once with openssl and kept in the data directory.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

/** The files of the certificate and key to use: the operator's (validated by config.ts), or the self-signed pair. */
export function ensureQuicCertificate(
  dir: string,
  provided: { cert?: string; key?: string } = {},
): { key: string; cert: string } {
  if (provided.cert && provided.key) return { key: provided.key, cert: provided.cert };
  const key = path.join(dir, "key.pem");
  const cert = path.join(dir, "cert.pem");
  if (fs.existsSync(key) && fs.existsSync(cert)) return { key, cert };
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:P-256",
      "-nodes",
      "-days",
      "3650",
      "-subj",
      "/CN=localhost",
      "-addext",
      "subjectAltName=DNS:localhost,IP:127.0.0.1",
      "-keyout",
      key,
      "-out",
      cert,
    ],
    { stdio: "ignore" },
  );
  fs.chmodSync(key, 0o600);
  return { key, cert };
}
