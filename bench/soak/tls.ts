// TLS for the soak's cloud: a throwaway CA, the server pair in fixed files the cloud reads (--tls-cert,
// --tls-key), renewed in place by the certificate fault (a new pair, then SIGHUP). The agent trusts the CA
// through NODE_EXTRA_CA_CERTS; this process (the viewer, the read-back) through its fetch dispatcher and the
// WebSocket client's `ca`.
import fs from "node:fs";
import path from "node:path";
import tls from "node:tls";
import { Agent, getGlobalDispatcher, setGlobalDispatcher } from "undici";
import { makeTestCa } from "../../tests/support/test-ca.js";

export interface SoakTls {
  ca: string;
  /** The cloud's environment: the pair's files. */
  env: NodeJS.ProcessEnv;
  /** Writes a new pair (serial `serialHex`) over the files the cloud reads. */
  renew(serialHex: string): void;
  /** The serial number (upper-case hex) of the certificate served on `port`. */
  served(port: number): Promise<string>;
  /** Gives this process its own trust back. */
  close(): void;
}

export function startTls(dir: string): SoakTls {
  fs.mkdirSync(dir, { recursive: true });
  const ca = makeTestCa(dir);
  const cert = path.join(dir, "cloud.pem");
  const key = path.join(dir, "cloud.key");
  const renew = (serialHex: string) => {
    const p = ca.issue(`pair-${serialHex}`, serialHex);
    // Key first, each by rename: the cloud reads whole files, whenever its SIGHUP comes.
    fs.renameSync(p.key, key);
    fs.renameSync(p.cert, cert);
  };
  renew("01");
  const before = getGlobalDispatcher();
  const extraCa = process.env.NODE_EXTRA_CA_CERTS;
  setGlobalDispatcher(new Agent({ connect: { ca: [...tls.rootCertificates, ca.ca] } }));
  process.env.NODE_EXTRA_CA_CERTS = ca.caFile; // for the agent, started as a child
  return {
    ca: ca.ca,
    env: { CLOUD_TLS_CERT: cert, CLOUD_TLS_KEY: key },
    renew,
    served: (port) =>
      new Promise((resolve, reject) => {
        const s = tls.connect({ host: "127.0.0.1", port, ca: ca.ca, servername: "localhost" }, () => {
          const serial = s.getPeerCertificate().serialNumber;
          s.destroy();
          resolve(serial.replace(/^0+/, "").toUpperCase());
        });
        s.once("error", reject);
      }),
    close() {
      setGlobalDispatcher(before);
      if (extraCa === undefined) delete process.env.NODE_EXTRA_CA_CERTS;
      else process.env.NODE_EXTRA_CA_CERTS = extraCa;
    },
  };
}
