// A throwaway certificate authority made with openssl in a directory of the test's, and server certificates for
// localhost signed by it: what an operator's CA gives, so clients trust the CA (not the server certificate).
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

export interface TestCa {
  /** PEM file of the CA certificate (what a client trusts). */
  caFile: string;
  ca: string;
  /** Writes `<name>.pem` and `<name>.key`: a P-256 certificate for localhost and 127.0.0.1 with this serial (hex). */
  issue(name: string, serialHex: string): { cert: string; key: string };
  /** As issue, valid from `start` to `end` only (openssl's YYYYMMDDHHMMSSZ), e.g. already expired or not yet valid. */
  issueDated(name: string, serialHex: string, start: string, end: string): { cert: string; key: string };
}

/** `openssl ca` (the one command that takes any validity dates) with a database of its own in the CA's directory. */
const CA_CONFIG =
  "[ca]\ndefault_ca = test\n[test]\ndatabase = index.txt\nnew_certs_dir = .\nserial = serial.txt\ndefault_md = sha256\npolicy = any\nunique_subject = no\n[any]\ncommonName = supplied\n";

const openssl = (dir: string, args: string[]) =>
  execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
const EC = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];

export function makeTestCa(dir: string): TestCa {
  openssl(dir, [
    "req",
    "-x509",
    ...EC,
    "-days",
    "2",
    "-subj",
    "/CN=cloud-peer test CA",
    "-addext",
    "basicConstraints=critical,CA:TRUE",
    "-addext",
    "keyUsage=critical,keyCertSign,cRLSign",
    "-keyout",
    "ca.key",
    "-out",
    "ca.pem",
  ]);
  fs.writeFileSync(
    path.join(dir, "server.ext"),
    "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n",
  );
  const caFile = path.join(dir, "ca.pem");
  return {
    caFile,
    ca: fs.readFileSync(caFile, "utf8"),
    issue(name, serialHex) {
      openssl(dir, ["req", "-new", ...EC, "-subj", "/CN=localhost", "-keyout", `${name}.key`, "-out", `${name}.csr`]);
      openssl(dir, [
        "x509",
        "-req",
        "-in",
        `${name}.csr`,
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-set_serial",
        `0x${serialHex}`,
        "-days",
        "1",
        "-extfile",
        "server.ext",
        "-out",
        `${name}.pem`,
      ]);
      fs.chmodSync(path.join(dir, `${name}.key`), 0o600);
      return { cert: path.join(dir, `${name}.pem`), key: path.join(dir, `${name}.key`) };
    },
    issueDated(name, serialHex, start, end) {
      if (!fs.existsSync(path.join(dir, "ca.cnf"))) {
        fs.writeFileSync(path.join(dir, "ca.cnf"), CA_CONFIG);
        fs.writeFileSync(path.join(dir, "index.txt"), "");
      }
      fs.writeFileSync(path.join(dir, "serial.txt"), `${serialHex}\n`);
      openssl(dir, ["req", "-new", ...EC, "-subj", "/CN=localhost", "-keyout", `${name}.key`, "-out", `${name}.csr`]);
      openssl(dir, [
        "ca",
        "-batch",
        "-config",
        "ca.cnf",
        "-keyfile",
        "ca.key",
        "-cert",
        "ca.pem",
        "-in",
        `${name}.csr`,
        "-out",
        `${name}.pem`,
        "-startdate",
        start,
        "-enddate",
        end,
        "-extfile",
        "server.ext",
        "-notext",
      ]);
      fs.chmodSync(path.join(dir, `${name}.key`), 0o600);
      return { cert: path.join(dir, `${name}.pem`), key: path.join(dir, `${name}.key`) };
    },
  };
}
