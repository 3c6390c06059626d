// Peer: NATS JetStream (Debian package `nats-server`) with file storage, and the `nats` 2.x client with
// acked JetStream publishes. Set-up: installs the package if missing and starts a private server on a
// loopback port with JetStream's store in a temp dir, and a file-storage stream for the benchmark's subject.
// nats-server 2.9 refuses `sync_interval`, so an ack does not mean the message reached the disk.
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { connect, StorageType, type NatsConnection } from "nats";
import { stopChild } from "../../runtime/device-bench/children.js";
import { ensureDebianPackage, freeTcpPort, waitForPort, type PeerBroker, type PeerClient } from "./broker.js";

const STREAM = "BENCH";
export const NATS_SUBJECT = "bench.sample.counter";

export async function startNats(dir: string): Promise<PeerBroker> {
  const program = ensureDebianPackage("nats-server", "nats-server");
  const port = await freeTcpPort();
  // Its log (informational lines on stderr) goes to the temp dir. The batched case at 64 KiB sends 16 points
  // (1 MiB and a little) per message, past NATS's default 1 MiB max_payload: the server is allowed 8 MiB.
  const conf = path.join(dir, "nats.conf");
  fs.writeFileSync(conf, "max_payload: 8388608\n");
  const child = spawn(
    program,
    [
      "-c",
      conf,
      "-a",
      "127.0.0.1",
      "-p",
      String(port),
      "-js",
      "-sd",
      path.join(dir, "jetstream"),
      "-l",
      path.join(dir, "nats.log"),
    ],
    { stdio: "ignore" },
  );
  await waitForPort(port, child, "nats-server");
  const url = `nats://127.0.0.1:${port}`;
  // JetStream answers once it is enabled; the stream keeps everything (no limits) in files.
  const nc = await connect({ servers: url });
  try {
    const jsm = await nc.jetstreamManager({ timeout: 20_000 });
    await jsm.streams.add({ name: STREAM, subjects: [NATS_SUBJECT], storage: StorageType.File });
  } finally {
    await nc.close();
  }
  return { name: "nats", url, child, stop: () => stopChild(child, "SIGTERM") };
}

export async function connectNats(url: string, name: string): Promise<PeerClient> {
  const nc: NatsConnection = await connect({ servers: url, name });
  const js = nc.jetstream();
  return {
    publish(payload, done) {
      js.publish(NATS_SUBJECT, payload).then(
        () => done(),
        (e: Error) => done(e),
      );
    },
    async subscribe(onMessage) {
      // An ordered consumer: the stream's messages in order from the start, flow-controlled, no acks.
      const consumer = await js.consumers.get(STREAM);
      const messages = await consumer.consume();
      void (async () => {
        for await (const m of messages) await onMessage(m.data);
      })();
    },
    async close() {
      await nc.close();
    },
  };
}
