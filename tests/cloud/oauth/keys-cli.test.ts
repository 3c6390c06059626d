// `cloud-peer keys rotate` and `keys list` as real child processes against a peer's data directory;
// the running peer picks the new key up on reload and keeps the old one published.
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { createRemoteJWKSet, jwtVerify } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPeer, type TestPeer } from "../harness.js";
import { decodeJwt, passwordToken } from "./helpers.js";

const run = promisify(execFile);
const BIN = path.resolve(import.meta.dirname, "../../../bin/cloud-peer.mjs");

describe("cloud-peer keys", () => {
  let peer: TestPeer;
  beforeAll(async () => {
    peer = await startTestPeer();
  });
  afterAll(async () => {
    await peer.stop();
  });

  it("rotate adds a signing key, list shows both, old tokens keep verifying", async () => {
    const old = (await passwordToken(peer, "admin", "Admin-password-1")).access_token;
    const { stdout } = await run(process.execPath, [BIN, "keys", "rotate", "--data", peer.dataDir], {
      env: { ...process.env, CLOUD_LOG_LEVEL: "warn" },
    });
    const kid = /new signing key (\S+);/.exec(stdout)?.[1];
    expect(kid).toBeTruthy();
    const listed = (await run(process.execPath, [BIN, "keys", "list", "--data", peer.dataDir])).stdout
      .trim()
      .split("\n");
    expect(listed).toHaveLength(2);
    expect(listed.find((l) => l.startsWith(kid!))).toMatch(/current$/);
    expect(listed.find((l) => l.startsWith(decodeJwt(old).header.kid))).toMatch(/retires \d{4}-/);

    await peer.svc.oauth.keys.reload(); // what the 30 s reload timer does
    const fresh = (await passwordToken(peer, "admin", "Admin-password-1")).access_token;
    expect(decodeJwt(fresh).header.kid).toBe(kid);
    const jwks = createRemoteJWKSet(new URL(`${peer.url}/api/auth/oauth2/jwks`));
    await expect(jwtVerify(old, jwks)).resolves.toBeTruthy();
    await expect(jwtVerify(fresh, jwks)).resolves.toBeTruthy();
  }, 120_000); // two child processes each compile the peer through tsx: slow on a loaded machine
});
