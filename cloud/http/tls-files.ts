// The operator's certificate and key files (HTTPS/WSS on the listen address, and QUIC): checked at start so a
// wrong pair fails there with a message naming the setting, not at the first handshake; reloaded on SIGHUP.
import crypto from "node:crypto";
import fs from "node:fs";
import type https from "node:https";
import type pino from "pino";

/** How a pair of settings is named in messages, e.g. `--tls-cert / CLOUD_TLS_CERT`. */
export interface PairNames {
  cert: string;
  key: string;
}

export interface TlsPair {
  cert: string;
  key: string;
  /** The leaf certificate's serial number (hex) and SHA-256 fingerprint: logged on reload, never secret. */
  serial: string;
  fingerprint256: string;
  validTo: string;
}

/**
 * Reads both files and checks that the first certificate parses, is valid now, and the key is its private key. Errors name the
 * setting and the file's fault, never the file's content (it holds a private key).
 */
export function readTlsPair(files: { cert: string; key: string }, names: PairNames): TlsPair {
  const read = (file: string, name: string) => {
    try {
      return fs.readFileSync(file, "utf8");
    } catch (e) {
      throw new Error(
        `${name} "${file}": cannot read the file (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
      );
    }
  };
  const cert = read(files.cert, names.cert);
  const key = read(files.key, names.key);
  let x509: crypto.X509Certificate;
  try {
    x509 = new crypto.X509Certificate(cert);
  } catch {
    throw new Error(`${names.cert} "${files.cert}": no PEM certificate in the file`);
  }
  let privateKey: crypto.KeyObject;
  try {
    privateKey = crypto.createPrivateKey(key);
  } catch {
    throw new Error(`${names.key} "${files.key}": no unencrypted PEM private key in the file`);
  }
  if (!x509.checkPrivateKey(privateKey))
    throw new Error(
      `${names.key} "${files.key}": the key does not belong to the certificate in ${names.cert} "${files.cert}"`,
    );
  // Every client would refuse it: better a clear refusal at start, or the pair in use kept on a reload.
  const iso = (d: string) => new Date(d).toISOString().replace(/\.000Z$/, "Z");
  const now = Date.now();
  if (now > Date.parse(x509.validTo))
    throw new Error(`${names.cert} "${files.cert}": the certificate expired on ${iso(x509.validTo)}`);
  if (now < Date.parse(x509.validFrom))
    throw new Error(`${names.cert} "${files.cert}": the certificate is not valid before ${iso(x509.validFrom)}`);
  return { cert, key, serial: x509.serialNumber, fingerprint256: x509.fingerprint256, validTo: x509.validTo };
}

export const TLS_NAMES: PairNames = { cert: "--tls-cert / CLOUD_TLS_CERT", key: "--tls-key / CLOUD_TLS_KEY" };
export const QUIC_NAMES: PairNames = {
  cert: "--iscp-quic-cert / CLOUD_ISCP_QUIC_CERT",
  key: "--iscp-quic-key / CLOUD_ISCP_QUIC_KEY",
};

/**
 * Reads the files again and gives the server the new pair for new connections (open ones keep theirs). A file
 * that fails the checks is logged and the pair in use is kept: a half-written renewal must not take the site down.
 */
export function reloadTls(
  server: https.Server,
  files: { cert: string; key: string },
  log: pino.Logger,
): TlsPair | undefined {
  let pair: TlsPair;
  try {
    pair = readTlsPair(files, TLS_NAMES);
    server.setSecureContext({ cert: pair.cert, key: pair.key });
  } catch (e) {
    log.error(
      { err: { message: (e as Error).message } },
      "TLS certificate not reloaded: the certificate in use is kept",
    );
    return undefined;
  }
  log.info(
    { serial: pair.serial, fingerprint256: pair.fingerprint256, valid_to: pair.validTo },
    "TLS certificate reloaded",
  );
  return pair;
}
