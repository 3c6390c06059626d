// The QUIC listener with the operator's own certificate: CLOUD_ISCP_QUIC_CERT / CLOUD_ISCP_QUIC_KEY (and
// --iscp-quic-cert / --iscp-quic-key) name PEM files, checked when the peer starts.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../cloud/config.js";
import { connectQuic } from "../../../proto/transport/quic/client.js";
import { IscpClient } from "../../../runtime/iscp/iscp-client.js";
import { makeLocalhostCert } from "../../support/iscp-broker.js";
import { adminToken, caller } from "../accounts/helpers.js";
import { startTestPeer, type TestPeer } from "../harness.js";
import { edgeToken, makeEdge } from "../org/helpers.js";

const PROJECT = "00000000-0000-0000-0000-000000000000";

describe("QUIC certificate and key files", () => {
  let dir: string;
  let certFile: string;
  let keyFile: string;
  let cert: string;
  let peer: TestPeer | undefined;

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "quic-files-"));
    const pair = makeLocalhostCert();
    cert = pair.cert;
    certFile = path.join(dir, "cert.pem");
    keyFile = path.join(dir, "key.pem");
    fs.writeFileSync(certFile, pair.cert);
    fs.writeFileSync(keyFile, pair.key, { mode: 0o600 });
  });
  afterAll(async () => {
    await peer?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("serves iSCP over QUIC with the given certificate: a client trusting only it connects as an edge", async () => {
    const env = { CLOUD_ISCP_QUIC_CERT: certFile, CLOUD_ISCP_QUIC_KEY: keyFile };
    const fromEnv = loadConfig({ listen: "127.0.0.1:0", dataDir: path.join(dir, "data") }, env);
    expect([fromEnv.iscpQuicCert, fromEnv.iscpQuicKey]).toEqual([certFile, keyFile]);

    peer = await startTestPeer({
      config: { iscpQuicListen: "127.0.0.1:0", iscpQuicCert: certFile, iscpQuicKey: keyFile },
    });
    const port = peer.svc.iscp.quicPort!;
    // The self-signed pair the peer makes otherwise is not there: the files were used.
    expect(fs.existsSync(path.join(peer.dataDir, "quic"))).toBe(false);
    const admin = caller(peer, await adminToken(peer));
    const edge = await makeEdge(admin, "quic-edge");
    const token = (await edgeToken(peer, edge)).body.access_token as string;
    const client = await IscpClient.connect({
      transport: () => connectQuic({ host: "127.0.0.1", port, ca: cert, serverName: "localhost", encoding: "proto" }),
      token,
      nodeId: edge.uuid,
      projectUuid: PROJECT,
      reconnect: false,
    });
    try {
      expect(client.state).toBe("open");
    } finally {
      await client.close();
    }
  });

  it("stops the start with an error naming the variable when a file is missing, unreadable or PEM text", () => {
    const load = (env: Record<string, string>) => () => loadConfig({ dataDir: path.join(dir, "data") }, env);
    expect(load({ CLOUD_ISCP_QUIC_CERT: path.join(dir, "nope.pem"), CLOUD_ISCP_QUIC_KEY: keyFile })).toThrow(
      /CLOUD_ISCP_QUIC_CERT "[^"]*nope\.pem": cannot read the file \(ENOENT\)/,
    );
    expect(load({ CLOUD_ISCP_QUIC_CERT: certFile, CLOUD_ISCP_QUIC_KEY: dir })).toThrow(
      /CLOUD_ISCP_QUIC_KEY "[^"]*": cannot read the file \(EISDIR\)/,
    );
    const pemText = fs.readFileSync(keyFile, "utf8");
    let message = "";
    try {
      load({ CLOUD_ISCP_QUIC_CERT: certFile, CLOUD_ISCP_QUIC_KEY: pemText })();
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toMatch(/CLOUD_ISCP_QUIC_KEY: expected the path of a PEM file, not PEM text/);
    expect(message).not.toContain("PRIVATE KEY"); // the key itself is never echoed
    expect(load({ CLOUD_ISCP_QUIC_CERT: certFile })).toThrow(/set both or neither/);
    expect(
      loadConfig({ iscpQuicCert: certFile, iscpQuicKey: keyFile, dataDir: path.join(dir, "data") }, {}).iscpQuicKey,
    ).toBe(keyFile);
  });
});
