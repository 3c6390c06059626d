// The --nats setting: a bad URL stops the start with a message naming the setting, an unreachable NATS
// stops it too (a peer that cannot tell the others of its changes must not serve), and a password in the
// URL never appears in either message.
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../cloud/config.js";
import { configShow } from "../../../cloud/cli/config-show.js";
import { startTestPeer } from "../harness.js";
import { freePort, natsInstalled, startNats } from "../../support/nats.js";

describe("--nats (CLOUD_NATS)", () => {
  it("refuses what is not a nats:// URL, naming the setting", () => {
    expect(() => loadConfig({ nats: "http://127.0.0.1:4222" }, {})).toThrow(/--nats.*expected nats:\/\/host:port/);
    expect(() => loadConfig({}, { CLOUD_NATS: "nats://ok:4222,redis://no:6379" })).toThrow(/CLOUD_NATS/);
    expect(loadConfig({}, { CLOUD_NATS: "nats://a:4222, nats://b:4222" }).nats).toBe("nats://a:4222, nats://b:4222");
    expect(loadConfig({}, {}).nats).toBeUndefined();
  });

  it("masks a password in the NATS URLs in config show", () => {
    const shown = configShow({}, { CLOUD_NATS: "nats://peer:s3cret-pass@a:4222,nats://b:4222" });
    expect(shown).toContain("nats://peer:********@a:4222,nats://b:4222");
    expect(shown).not.toContain("s3cret");
  });

  it("stops the start when NATS cannot be reached, without echoing a password", async () => {
    const port = await freePort();
    const err = await startTestPeer({ config: { nats: `nats://user:s3cret-pass@127.0.0.1:${port}` } }).then(
      async (p) => (await p.stop(), undefined),
      (e: unknown) => e as Error,
    );
    expect(err?.message).toMatch(/^--nats \(CLOUD_NATS\): cannot connect to nats:\/\/127\.0\.0\.1:\d+/);
    expect(err?.message).not.toContain("s3cret");
  }, 120_000);

  it.runIf(natsInstalled())(
    "reports the cluster ready on NATS, and not ready while NATS is away",
    async () => {
      const nats = await startNats();
      const peer = await startTestPeer({ config: { nats: nats.url } });
      try {
        expect((await peer.api("/health/ready")).status).toBe(200);
        await nats.pause();
        let r = await peer.api("/health/ready");
        for (let i = 0; r.status !== 503 && i < 100; i++)
          r = (await new Promise((ok) => setTimeout(ok, 50)), await peer.api("/health/ready"));
        expect(r.status).toBe(503);
        expect(((await r.json()) as { title: string }).title).toMatch(
          /cluster: NATS is unreachable \(nats:\/\/127\.0\.0\.1:\d+\); reconnecting/,
        );
      } finally {
        await peer.stop();
        await nats.stop();
      }
    },
    60_000,
  );
});
