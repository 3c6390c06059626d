// The patches of @matrixai/quic's internals (proto/transport/quic/patches/) are written against one version of the
// library: it is pinned, and on that version every patch must take on a real connection (a patch that finds the
// internals changed swaps nothing, silently, so only speed would be lost).
import { randomFillSync } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { QUICClient } from "@matrixai/quic";
import { describe, expect, it } from "vitest";
import { installQuicPatches } from "../../../../../proto/transport/quic/patches/index.js";
import { listenQuic } from "../../../../../proto/transport/quic/server.js";
import { QUIC_SHARED_CONFIG, quietLogger } from "../../../../../proto/transport/quic/tuning.js";
import { makeLocalhostCert } from "../../../../support/iscp-broker.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "../../../../..");
const patchDir = join(root, "proto/transport/quic/patches");
const patches = readdirSync(patchDir).filter((f) => f.endsWith(".ts") && f !== "index.ts");

describe("@matrixai/quic version", () => {
  it("is pinned exactly, and the installed one is the pinned one", () => {
    // An optional dependency (QUIC is loaded on demand), pinned all the same.
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as Record<
      string,
      Record<string, string> | undefined
    >;
    const pinned = pkg.optionalDependencies?.["@matrixai/quic"] ?? pkg.dependencies?.["@matrixai/quic"];
    expect(
      pinned,
      "@matrixai/quic must be pinned to one version in package.json: the patches reach into its internals",
    ).toMatch(/^\d+\.\d+\.\d+$/);
    const installed = (createRequire(import.meta.url)("@matrixai/quic/package.json") as { version: string }).version;
    expect(
      installed,
      `@matrixai/quic ${installed} is installed but ${pinned} is pinned: re-check the patches in proto/transport/quic/patches (${patches.join(", ")}) and the datagram channel (proto/transport/quic/datagrams.ts) against the new version's internals, then change the pin`,
    ).toBe(pinned);
  });

  it("takes every patch on a real client connection of the pinned version", async () => {
    const { key, cert } = makeLocalhostCert();
    const server = await listenQuic({
      key,
      cert,
      maxStreamMessageBytes: 1 << 20,
      maxIncomingMessageBytes: 1 << 20,
      lowWaterBytes: 1 << 16,
      onTransport: () => {},
    });
    const client = await QUICClient.createQUICClient({
      logger: quietLogger(),
      host: "127.0.0.1",
      port: server.port,
      crypto: {
        ops: {
          async randomBytes(data: ArrayBuffer) {
            randomFillSync(new Uint8Array(data));
          },
        },
      },
      config: { verifyPeer: false, applicationProtos: ["iscp"], ...QUIC_SHARED_CONFIG },
    });
    try {
      expect(installQuicPatches(client, client.connection)).toEqual({
        udpBuffers: true,
        shortHeaderRoute: true,
        recvLock: true,
        streamScan: true,
        sendBatch: true,
        directSend: true,
      });
    } finally {
      await client.destroy({ force: true }).catch(() => {});
      await server.close();
    }
  });
});
