// HTTPS and WSS on the listen address (--tls-cert / --tls-key, CLOUD_TLS_CERT / CLOUD_TLS_KEY, the --config keys),
// on a real cloud-peer process with a certificate of a test CA: clients trust the CA, as they would an operator's.
import { execFile, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import https from "node:https";
import os from "node:os";
import path from "node:path";
import tls from "node:tls";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig, resolveSettings, showSettings } from "../../../cloud/config.js";
import { connectQuic } from "../../../proto/transport/quic/client.js";
import { IscpClient } from "../../../runtime/iscp/iscp-client.js";
import { startTestPeer } from "../harness.js";
import { makeTestCa, type TestCa } from "../../support/test-ca.js";
import { until } from "../../e2e/stack.js";
import { spawnPeerAt, spawnPeerProcess } from "../iscp/peer-process.js";

const run = promisify(execFile);
const FIXTURE = path.join(import.meta.dirname, "fixtures", "iscp-ts-wss.ts");
const ADMIN_PASSWORD = "Admin-password-1"; // spawnPeerAt's CLOUD_ADMIN_PASSWORD

let dir: string;
let ca: TestCa;
let first: { cert: string; key: string };
let second: { cert: string; key: string };
let peer: { child: ChildProcess; url: string; exit: Promise<number | null> };
let output = "";
/** The cert and key files the peer was started with; renewals overwrite them, as certbot or an operator would. */
let live: { cert: string; key: string };

/** One HTTPS request trusting only the test CA; also the serial of the certificate the server presented. */
function request(
  url: string,
  o: { method?: string; form?: Record<string, string>; agent?: https.Agent } = {},
): Promise<{ status: number; body: any; serial: string }> {
  return new Promise((resolve, reject) => {
    const body = o.form ? new URLSearchParams(o.form).toString() : undefined;
    const req = https.request(
      url,
      {
        method: o.method ?? "GET",
        ca: ca.ca,
        agent: o.agent ?? false,
        headers: body ? { "content-type": "application/x-www-form-urlencoded" } : {},
      },
      (res) => {
        const serial = (res.socket as tls.TLSSocket).getPeerCertificate().serialNumber;
        let text = "";
        res.on("data", (c) => (text += String(c)));
        res.on("end", () => resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : undefined, serial }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

const passwordToken = (url: string) =>
  request(`${url}/api/auth/oauth2/token`, {
    method: "POST",
    form: { grant_type: "password", username: "admin", password: ADMIN_PASSWORD },
  });

const port = () => Number(new URL(peer.url).port);

/** The serial a new TLS connection to the peer is shown (checked against the test CA and the name localhost). */
function newConnectionSerial(): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = tls.connect({ host: "127.0.0.1", port: port(), servername: "localhost", ca: ca.ca }, () => {
      resolve(s.getPeerCertificate().serialNumber);
      s.end();
    });
    s.on("error", reject);
  });
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "cloud-tls-"));
  ca = makeTestCa(dir);
  first = ca.issue("first", "1001");
  second = ca.issue("second", "1002");
  live = { cert: path.join(dir, "live.pem"), key: path.join(dir, "live.key") };
  fs.copyFileSync(first.cert, live.cert);
  fs.copyFileSync(first.key, live.key);
  peer = await spawnPeerAt(path.join(dir, "data"), { CLOUD_TLS_CERT: live.cert, CLOUD_TLS_KEY: live.key });
  peer.child.stdout!.on("data", (c) => (output += String(c)));
  peer.child.stderr!.on("data", (c) => (output += String(c)));
}, 120_000);

afterAll(async () => {
  peer?.child.kill("SIGTERM");
  await peer?.exit;
  fs.rmSync(dir, { recursive: true, force: true });
});

describe.sequential("cloud-peer --tls-cert / --tls-key", () => {
  it("listens on https:// and answers a password-grant token request from a client that trusts the CA", async () => {
    expect(peer.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const r = await passwordToken(peer.url);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ token_type: "bearer", access_token: expect.any(String) });
    expect(r.serial).toBe("1001");
    // A client that does not trust the CA is refused by its own TLS check.
    await expect(
      new Promise((resolve, reject) =>
        https.get(`${peer.url}/api/health/alive`, { agent: false }, resolve).on("error", reject),
      ),
    ).rejects.toThrow(/self[- ]signed|unable to (get|verify)/i);
  }, 120_000);

  it("carries iSCP over wss://: the published @aptpod/iscp-ts client streams points through the peer", async () => {
    const token = (await passwordToken(peer.url)).body.access_token as string;
    const { stdout } = await run(process.execPath, ["--import", "tsx", FIXTURE, `localhost:${port()}`, token, "5"], {
      env: { ...process.env, NODE_EXTRA_CA_CERTS: ca.caFile },
      timeout: 60_000,
    });
    expect(JSON.parse(stdout.trim())).toEqual(["p1", "p2", "p3", "p4", "p5"]);
  }, 120_000);

  it("on SIGHUP serves the renewed certificate to new connections while an open one goes on", async () => {
    const keepAlive = new https.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      expect((await request(`${peer.url}/api/health/alive`, { agent: keepAlive })).serial).toBe("1001");
      fs.copyFileSync(second.cert, live.cert);
      fs.copyFileSync(second.key, live.key);
      peer.child.kill("SIGHUP");
      await until(
        async () => (await newConnectionSerial()) === "1002",
        30_000,
        "the renewed certificate on a new connection",
      );
      // The connection opened before the reload was not dropped: the same socket answers, with the old certificate.
      const again = await request(`${peer.url}/api/health/alive`, { agent: keepAlive });
      expect([again.status, again.serial]).toEqual([200, "1001"]);
      expect(peer.child.exitCode).toBe(null);
    } finally {
      keepAlive.destroy();
    }
  }, 120_000);

  it("on SIGHUP with a broken renewal (a key of another certificate, then no PEM) logs why and keeps the certificate in use", async () => {
    fs.copyFileSync(first.key, live.key); // live.pem is still `second`
    peer.child.kill("SIGHUP");
    await until(() => /TLS certificate not reloaded/.test(output), 30_000, "the error logged");
    expect(output).toMatch(/CLOUD_TLS_KEY \\?"[^"]*live\.key\\?": the key does not belong to the certificate/);
    expect(output).not.toContain("PRIVATE KEY");
    fs.writeFileSync(live.cert, "not a certificate\n");
    output = "";
    peer.child.kill("SIGHUP");
    await until(() => /TLS certificate not reloaded/.test(output), 30_000, "the second error logged");
    expect(await newConnectionSerial()).toBe("1002");
    expect((await request(`${peer.url}/api/health/alive`)).status).toBe(200);
  }, 120_000);

  it("refuses to start with a missing file, only one of the pair, or a key that is not the certificate's", async () => {
    const startWith = async (env: Record<string, string>) => {
      const r = await run(
        process.execPath,
        [path.resolve("bin/cloud-peer.mjs"), "--listen", "127.0.0.1:0", "--data", path.join(dir, "refused")],
        { env: { ...process.env, ...env } },
      ).catch((e: { code: number; stderr: string }) => e);
      return r as { code?: number; stderr: string };
    };
    const mismatch = await startWith({ CLOUD_TLS_CERT: first.cert, CLOUD_TLS_KEY: second.key });
    expect(mismatch.code).toBe(2);
    expect(mismatch.stderr).toMatch(
      /^cloud-peer: --tls-key \/ CLOUD_TLS_KEY "[^"]*second\.key": the key does not belong to the certificate in --tls-cert \/ CLOUD_TLS_CERT "[^"]*first\.pem"\n$/,
    );
    expect(fs.existsSync(path.join(dir, "refused", "cloud.db"))).toBe(false); // refused before anything was made
    const load = (flags: Record<string, string>) => () =>
      loadConfig({ dataDir: path.join(dir, "refused"), ...flags }, {});
    expect(load({ tlsCert: path.join(dir, "nope.pem"), tlsKey: first.key })).toThrow(
      /^invalid --tls-cert "[^"]*nope\.pem": cannot read the file \(ENOENT\)$/,
    );
    expect(load({ tlsCert: first.cert })).toThrow(
      "--tls-cert / CLOUD_TLS_CERT and --tls-key / CLOUD_TLS_KEY go together: set both or neither",
    );
    expect(load({ tlsCert: first.key, tlsKey: first.key })).toThrow(
      /--tls-cert \/ CLOUD_TLS_CERT "[^"]*first\.key": no PEM certificate in the file/,
    );
    expect(load({ tlsCert: first.cert, tlsKey: first.cert })).toThrow(
      /--tls-key \/ CLOUD_TLS_KEY "[^"]*first\.pem": no unencrypted PEM private key in the file/,
    );
  }, 120_000);

  it("refuses to start with an expired or a not yet valid certificate, naming the setting and the dates", async () => {
    const expired = ca.issueDated("expired", "1003", "20200101000000Z", "20200102000000Z");
    const early = ca.issueDated("early", "1004", "20990101000000Z", "20990102000000Z");
    const load = (pair: { cert: string; key: string }) => () =>
      loadConfig({ dataDir: path.join(dir, "refused"), tlsCert: pair.cert, tlsKey: pair.key }, {});
    expect(load(expired)).toThrow(
      /--tls-cert \/ CLOUD_TLS_CERT "[^"]*expired\.pem": the certificate expired on 2020-01-02T00:00:00Z/,
    );
    expect(load(early)).toThrow(
      /--tls-cert \/ CLOUD_TLS_CERT "[^"]*early\.pem": the certificate is not valid before 2099-01-01T00:00:00Z/,
    );
    const started = await run(
      process.execPath,
      [path.resolve("bin/cloud-peer.mjs"), "--listen", "127.0.0.1:0", "--data", path.join(dir, "refused")],
      {
        env: { ...process.env, CLOUD_TLS_CERT: expired.cert, CLOUD_TLS_KEY: expired.key },
      },
    ).catch((e: { code: number; stderr: string }) => e);
    expect((started as { code?: number }).code).toBe(2);
    expect((started as { stderr: string }).stderr).toMatch(/the certificate expired on 2020-01-02T00:00:00Z/);
  }, 120_000);

  it("on SIGHUP with an expired renewal logs why and keeps serving the pair in use", async () => {
    const before = await newConnectionSerial();
    const expired = ca.issueDated("expired-renewal", "1005", "20200101000000Z", "20200102000000Z");
    fs.copyFileSync(expired.cert, live.cert);
    fs.copyFileSync(expired.key, live.key);
    output = "";
    peer.child.kill("SIGHUP");
    await until(() => /TLS certificate not reloaded/.test(output), 30_000, "the error logged");
    expect(output).toMatch(/the certificate expired on 2020-01-02T00:00:00Z/);
    expect(await newConnectionSerial()).toBe(before);
    expect((await request(`${peer.url}/api/health/alive`)).status).toBe(200);
  }, 120_000);

  it("serves iSCP over QUIC with the same certificate when no QUIC certificate is given, renewed with it", async () => {
    const files = { cert: path.join(dir, "quic-live.pem"), key: path.join(dir, "quic-live.key") };
    fs.copyFileSync(first.cert, files.cert);
    fs.copyFileSync(first.key, files.key);
    const quicPeer = await startTestPeer({
      config: { iscpQuicListen: "127.0.0.1:0", tlsCert: files.cert, tlsKey: files.key },
    });
    // A client trusting only `trusted` connects (and closes again), or fails its TLS check.
    const token = (await passwordToken(quicPeer.url)).body.access_token as string;
    const quicConnects = async (trusted: string) => {
      const client = await IscpClient.connect({
        transport: () =>
          connectQuic({
            host: "127.0.0.1",
            port: quicPeer.svc.iscp.quicPort!,
            ca: trusted,
            serverName: "localhost",
            encoding: "proto",
          }),
        token,
        nodeId: "11111111-1111-4111-8111-111111111111",
        reconnect: false,
      }).catch(() => undefined);
      await client?.close();
      return client !== undefined;
    };
    try {
      expect(quicPeer.url).toMatch(/^https:/);
      expect(fs.existsSync(path.join(quicPeer.dataDir, "quic"))).toBe(false); // no self-signed pair made
      expect(await quicConnects(ca.ca)).toBe(true);
      // A renewal from another CA: after the reload, QUIC's new connections show it as HTTPS's do.
      const otherCa = makeTestCa(fs.mkdtempSync(path.join(dir, "other-ca-")));
      const renewed = otherCa.issue("renewed", "2001");
      fs.copyFileSync(renewed.cert, files.cert);
      fs.copyFileSync(renewed.key, files.key);
      expect(await quicConnects(otherCa.ca)).toBe(false);
      expect(quicPeer.reloadTls()).toBe(true);
      expect(await quicConnects(otherCa.ca)).toBe(true);
      expect(await quicConnects(ca.ca)).toBe(false);
    } finally {
      await quicPeer.stop();
    }
  }, 120_000);

  it("without TLS, SIGHUP (systemctl reload) leaves the peer serving instead of ending it", async () => {
    const plain = await spawnPeerProcess();
    try {
      plain.child.kill("SIGHUP");
      await new Promise((r) => setTimeout(r, 500));
      expect(plain.child.exitCode).toBe(null);
      expect((await fetch(`${plain.url}/api/health/alive`)).status).toBe(200);
    } finally {
      await plain.stop();
    }
  }, 120_000);

  it("takes the pair from the --config file as well, and config show prints the paths", () => {
    const file = path.join(dir, "tls.yaml");
    fs.writeFileSync(file, `tls-cert: ${first.cert}\ntls-key: ${first.key}\n`);
    const c = loadConfig({ config: file, listen: "127.0.0.1:8443" }, {});
    expect([c.tlsCert, c.tlsKey, c.publicUrl]).toEqual([first.cert, first.key, "https://127.0.0.1:8443"]);
    expect(showSettings(resolveSettings({ config: file }, {}))).toMatchObject({
      "tls-cert": first.cert,
      "tls-key": first.key,
    });
  });
});
