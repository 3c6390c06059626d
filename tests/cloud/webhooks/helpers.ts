// Shared by the webhook tests: an HTTP receiver on port 0 that records what hooks send it.
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { TestPeer } from "../harness.js";

export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** An HTTP receiver answering a path with its planned `statuses` in turn (then 204), recording every request. */
export async function receiver() {
  const got: Received[] = [];
  const plan = new Map<string, number[]>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      got.push({ path: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      res.writeHead(plan.get(req.url ?? "")?.shift() ?? 204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = (path: string) => `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
  return { got, plan, url, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/** Runs `changes` while the measurement's next event waits for its turn (the webhooks' test seam), then lets it go. */
export async function holdingTurn(peer: TestPeer, meas: string, changes: () => Promise<void>): Promise<void> {
  let release = () => {};
  const held = new Promise<void>((r) => (release = r));
  peer.svc.webhooks.beforeMeasurementEvent = (m) => (m === meas ? held : undefined);
  try {
    await changes();
  } finally {
    release();
    peer.svc.webhooks.beforeMeasurementEvent = () => undefined;
  }
}
