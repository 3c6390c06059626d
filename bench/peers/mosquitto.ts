// Peer: mosquitto (Debian package) with persistence on, and the `mqtt` client with QoS 1.
// Set-up: installs the package if missing and starts a private broker on a loopback port with a temp dir.
// Persistence in mosquitto is a periodic snapshot (autosave_interval), not a write per message, so a PUBACK
// does not mean the message is on disk. The persistence folder must belong to
// the user mosquitto drops to (`mosquitto`), or nothing is written; without that user it runs as root.
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import mqtt from "mqtt";
import { stopChild } from "../../runtime/device-bench/children.js";
import { ensureDebianPackage, freeTcpPort, waitForPort, type PeerBroker, type PeerClient } from "./broker.js";

export const MQTT_TOPIC = "bench/sample/counter";

export async function startMosquitto(dir: string, window: number): Promise<PeerBroker> {
  const program = ensureDebianPackage("mosquitto", "mosquitto");
  const port = await freeTcpPort();
  const data = path.join(dir, "mosquitto");
  fs.mkdirSync(data, { recursive: true });
  const owner = mosquittoUser();
  if (owner) {
    fs.chmodSync(dir, 0o711); // the dropped-privilege broker must reach its folder inside our temp dir
    fs.chownSync(data, owner.uid, owner.gid);
  }
  const conf = path.join(dir, "mosquitto.conf");
  fs.writeFileSync(
    conf,
    [
      `listener ${port} 127.0.0.1`,
      "allow_anonymous true",
      `user ${owner ? "mosquitto" : "root"}`,
      "persistence true",
      `persistence_location ${data}/`,
      // To the subscriber as many QoS 1 messages in flight as the producer keeps, and no queue limit
      // (the default 1000 drops QoS 1 messages a subscriber has not taken yet: the count would never end).
      `max_inflight_messages ${window}`,
      "max_queued_messages 0",
      "log_dest stderr",
      "log_type error",
      "",
    ].join("\n"),
  );
  const child = spawn(program, ["-c", conf], { stdio: ["ignore", "ignore", "inherit"] });
  await waitForPort(port, child, "mosquitto");
  return { name: "mosquitto", url: `mqtt://127.0.0.1:${port}`, child, stop: () => stopChild(child, "SIGTERM") };
}

function mosquittoUser(): { uid: number; gid: number } | undefined {
  const line = fs
    .readFileSync("/etc/passwd", "utf8")
    .split("\n")
    .find((l) => l.startsWith("mosquitto:"));
  if (!line) return undefined;
  const f = line.split(":");
  return { uid: Number(f[2]), gid: Number(f[3]) };
}

export async function connectMosquitto(url: string, clientId: string): Promise<PeerClient> {
  const client = await mqtt.connectAsync(url, { clientId, clean: true, reconnectPeriod: 0, protocolVersion: 4 });
  return {
    publish(payload, done) {
      const b = Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
      client.publish(MQTT_TOPIC, b, { qos: 1 }, (err) => done(err ?? undefined));
    },
    async subscribe(onMessage) {
      // handleMessage, not the "message" event: the PUBACK and the next message wait for its callback.
      client.handleMessage = (packet, done) => {
        const wait = onMessage(packet.payload as Buffer);
        if (wait)
          wait.then(
            () => done(),
            (e: Error) => done(e),
          );
        else done();
      };
      await client.subscribeAsync(MQTT_TOPIC, { qos: 1 });
    },
    close: () => client.endAsync(),
  };
}
